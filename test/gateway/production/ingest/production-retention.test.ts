import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CommandQueue } from '../../../../src/platform/commands/command-queue.js'
import { RetentionJob } from '../../../../src/platform/retention/retention-job.js'
import { TelemetryStore } from '../../../../src/platform/telemetry/telemetry-store.js'
import { pruneProduction } from '../../../../src/gateway/production/ingest/production-retention.js'
import { ProductionStore } from '../../../../src/gateway/production/ingest/production-store.js'
import type { Storage } from '../../../../src/storage/storage.js'
import { DIALECTS, openTestStorage } from '../../../helpers/dialects.js'
import { addMachine, DAY, HOUR } from './production-helpers.js'

describe.each(DIALECTS)('production retention on %s', (dialect) => {
  let storage: Storage & { cleanup(): Promise<void> }
  let store: ProductionStore
  const H = Math.floor(Date.now() / 1000 / HOUR) * HOUR - 5 * HOUR
  beforeAll(async () => {
    storage = await openTestStorage(dialect)
    store = new ProductionStore(storage)
  })
  afterAll(() => storage.cleanup())

  const rows = async (table: 'production_events' | 'production_states' | 'production_hourly' | 'production_daily' | 'production_jobs' | 'production_current', deviceId: string) =>
    storage.db.selectFrom(table).selectAll().where('device_id', '=', deviceId).execute()
  const prune = (nowS: number) => pruneProduction(storage, nowS * 1000, { rawDays: 90, pacer: { size: 1, stopped: false, rest: async () => true } })

  it('deletes raw events and state rows past the retention, keeping the state each machine was in at the cut-off; figures and jobs 2 years', async () => {
    const id = 'rt-prod'
    await addMachine(storage, id)
    await store.storeFrame(id, [
      { id: 's0', ts: H, kind: 'state', state: 'productive' },
      { id: 's1', ts: H + 600, kind: 'state', state: 'standby' },
      { id: 's2', ts: H + 1200, kind: 'state', state: 'productive' },
      { id: 'p0', ts: H + 10, kind: 'placements', placed: 5, missed: 0, job_id: 'J' },
      { id: 'p1', ts: H + 3000, kind: 'placements', placed: 7, missed: 1 },
      { id: 'p2', ts: H + HOUR + 60, kind: 'placements', placed: 3, missed: 0 },
      { id: 'j0', ts: H + 5, kind: 'job_started', job_id: 'J' },
      { id: 'j1', ts: H + 100, kind: 'job_ended', job_id: 'J', result: 'completed', boards_done: 1 },
    ])
    const hourly = await rows('production_hourly', id)

    // 90 days after H + 900: the cut-off falls between s1 and s2.
    expect(await prune(H + 900 + 90 * DAY)).toBe(6) // the events s0, j0, p0, j1, s1 and the state row s0
    expect((await rows('production_events', id)).map((r) => r.event_id).sort()).toEqual(['p1', 'p2', 's2'])
    // s1 stays: the machine was standby at the cut-off, and a late event before s2 splits that interval.
    expect((await rows('production_states', id)).map((r) => r.event_id).sort()).toEqual(['s1', 's2'])
    expect(await rows('production_hourly', id)).toEqual(hourly)
    expect(await rows('production_jobs', id)).toHaveLength(1)

    // Long after: only the newest state row is left; figures and jobs go after 2 years.
    expect(await prune(H + 400 * DAY)).toBe(4) // the events p1, p2, s2 and the state row s1
    expect((await rows('production_states', id)).map((r) => r.event_id)).toEqual(['s2'])
    expect(await rows('production_events', id)).toEqual([])
    expect(await rows('production_hourly', id)).toEqual(hourly)
    // Past 2 years an hourly row's figures go, but each machine's newest such row stays, zeroed,
    // with its running totals: the base of the later rows' differences (the fleet query).
    const zeroed = (row: (typeof hourly)[number]) => ({ ...row, s_productive: 0, s_standby: 0, placed: 0, missed: 0, jobs_completed: 0, faults: '{}', feeders: '[]', nozzles: '[]' })
    expect(hourly.length).toBeGreaterThan(1)
    await prune(H + 730 * DAY + HOUR / 2)
    expect(await rows('production_hourly', id)).toEqual([zeroed(hourly[0]!), ...hourly.slice(1)])
    expect(await rows('production_jobs', id)).toEqual([])
    await prune(H + 732 * DAY)
    expect(await rows('production_hourly', id)).toEqual([zeroed(hourly.at(-1)!)])
    expect(Number(hourly.at(-1)!.run_placed)).toBe(15)
    expect(await rows('production_daily', id)).toEqual([])
    expect(await rows('production_current', id)).toHaveLength(1)
  })

  it('runs in the retention job with PRODUCTION_RETENTION_DAYS', async () => {
    const id = 'rt-job'
    await addMachine(storage, id)
    await store.storeFrame(id, [{ id: 'f', ts: H, kind: 'fault', fault: 'other' }])
    const job = new RetentionJob(
      {
        db: storage.db,
        telemetry: new TelemetryStore(storage),
        commands: new CommandQueue(storage, { ackTimeoutMs: 60_000, maxAttempts: 5, ttlMs: 86_400_000 }),
        telemetryRetentionDays: 30,
        logRetentionDays: 30,
        production: (now, pacer) => pruneProduction(storage, now, { rawDays: 31, pacer }),
      },
      pino({ level: 'silent' }),
    )
    await job.runOnce((H + 30 * DAY) * 1000)
    expect(await rows('production_events', id)).toHaveLength(1)
    expect((await job.runOnce((H + 32 * DAY) * 1000)).production).toBeGreaterThanOrEqual(1)
    expect(await rows('production_events', id)).toEqual([])
  })
})
