import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CommandQueue } from '../../src/platform/commands/command-queue.js'
import { RetentionJob } from '../../src/platform/retention/retention-job.js'
import { PRUNE_BATCH, PRUNE_BATCH_TARGET_MS } from '../../src/storage/prune-pacer.js'
import { TelemetryStore } from '../../src/platform/telemetry/telemetry-store.js'
import type { PruneStep } from '../../src/storage/prune-step.js'
import { DIALECTS } from '../helpers/dialects.js'
import { offsetClock } from '../helpers/test-clocks.js'
import { startPlatformApp, type PlatformApp } from './platform-kit.js'

const DAY = 86_400_000
const COMMAND_POLICY = { ackTimeoutMs: 60_000, maxAttempts: 5, ttlMs: DAY }

describe.each(DIALECTS)('platform retention on %s', (dialect) => {
  let t: PlatformApp
  let job: RetentionJob
  beforeAll(async () => {
    t = await startPlatformApp(dialect, { TELEMETRY_RETENTION_DAYS: '7', LOG_RETENTION_DAYS: '3' })
    const db = t.storage.db
    const commands = new CommandQueue(t.storage, COMMAND_POLICY)
    job = new RetentionJob({ db, telemetry: new TelemetryStore(t.storage), commands, telemetryRetentionDays: 7, logRetentionDays: 3 }, t.app.log)
  })
  afterAll(() => t.close())

  it('prunes telemetry older than TELEMETRY_RETENTION_DAYS in batches, keeping newer points and the latest values', async () => {
    await t.addDevice('rt-1')
    const now = Date.now()
    // 2,500 points: 8–9 days old (beyond retention, more than two prune batches)…
    const old = Array.from({ length: 2500 }, (_, i) => ({ ts: now - 9 * DAY + i, values: { temp: i } }))
    await new TelemetryStore(t.storage).insert('rt-1', old)
    // …and a few recent ones through the API.
    await t.device('POST', '/v1/device/rt-1/telemetry/batch', [{ ts: now - 6 * DAY, values: { temp: -1 } }, { ts: now - 1000, values: { temp: -2 } }])

    const tallyMinutesBefore = (cutoff: number) =>
      t.storage.db.selectFrom('platform_window_tallies').select('bucket').where('kind', '=', 'telemetry').where('bucket', '<=', cutoff - 60_000).execute()
    expect((await tallyMinutesBefore(now - 7 * DAY)).length).toBeGreaterThan(0)
    const result = await job.runOnce(now)
    expect(result.telemetry).toBe(2500)
    // The summary's tallies of the pruned minutes go with them.
    expect(await tallyMinutesBefore(now - 7 * DAY)).toEqual([])
    const series = (await t.admin('GET', '/api/admin/device/rt-1/telemetry?keys=temp&limit=1000')).json().series.temp
    expect(series).toEqual([[now - 6 * DAY, -1], [now - 1000, -2]])
    expect((await t.admin('GET', '/api/admin/device/rt-1/detail')).json().latest_telemetry.temp).toEqual({ ts: now - 1000, value: -2 })
    expect((await job.runOnce(now)).telemetry).toBe(0)
  })

  it('prunes a backlog in bounded batches, oldest first, each starting where the last ended, and leaves nothing expired', async () => {
    await t.addDevice('rt-5')
    const now = Date.now()
    const old = now - 20 * DAY
    // 3,000 points at one time (batch boundaries fall inside it), then 1,200 a little newer.
    const keys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, k) => [`k${k}`, k]))
    const store = new TelemetryStore(t.storage)
    await store.insert('rt-5', [
      ...Array.from({ length: 60 }, () => ({ ts: old, values: keys(50) })),
      ...Array.from({ length: 24 }, (_, i) => ({ ts: old + 1 + i, values: keys(50) })),
    ])
    const steps: ({ from: number | undefined; batch: number } & PruneStep)[] = []
    const pruneBatch = store.pruneBatch.bind(store)
    store.pruneBatch = async (cutoff, batch, from) => {
      const step = await pruneBatch(cutoff, batch, from)
      steps.push({ from, batch, ...step })
      return step
    }
    const db = t.storage.db
    const commands = new CommandQueue(t.storage, COMMAND_POLICY)
    const result = await new RetentionJob({ db, telemetry: store, commands, telemetryRetentionDays: 7, logRetentionDays: 3 }, t.app.log).runOnce(now)

    expect(result.telemetry).toBe(4200)
    expect(steps.length).toBeGreaterThanOrEqual(5)
    expect(steps.every((s) => s.deleted <= s.batch && s.batch <= PRUNE_BATCH)).toBe(true)
    expect(steps[0]!.batch).toBe(PRUNE_BATCH)
    expect(steps[0]!.from).toBeUndefined()
    for (let i = 1; i < steps.length; i++) expect(steps[i]!.from).toBe(steps[i - 1]!.next)
    const left = await db.selectFrom('platform_telemetry').select((eb) => eb.fn.countAll<number>().as('n')).where('ts', '<', now - 7 * DAY).executeTakeFirstOrThrow()
    expect(Number(left.n)).toBe(0)
  })

  it('makes the next batch smaller when one takes longer than the target, so a request never waits long behind one', async () => {
    await t.addDevice('rt-6')
    const now = Date.now()
    const store = new TelemetryStore(t.storage)
    await store.insert('rt-6', Array.from({ length: 1500 }, (_, i) => ({ ts: now - 10 * DAY + i, values: { a: i, b: i } })))
    const batches: number[] = []
    const pruneBatch = store.pruneBatch.bind(store)
    store.pruneBatch = async (cutoff, batch, from) => {
      batches.push(batch)
      // The first batch is slow, as one holding SQLite's event loop in a large table is.
      if (batches.length === 1) await new Promise((resolve) => setTimeout(resolve, 4 * PRUNE_BATCH_TARGET_MS))
      return pruneBatch(cutoff, batch, from)
    }
    const commands = new CommandQueue(t.storage, COMMAND_POLICY)
    const result = await new RetentionJob({ db: t.storage.db, telemetry: store, commands, telemetryRetentionDays: 7, logRetentionDays: 3 }, t.app.log).runOnce(now)
    expect(result.telemetry).toBe(3000)
    expect(batches[0]).toBe(PRUNE_BATCH)
    // 4× the target: a quarter of the rows next (or less, the delete's own time counted too).
    expect(batches[1]).toBeLessThanOrEqual(PRUNE_BATCH / 4)
    expect(batches[1]).toBeGreaterThan(0)
  })

  it('prunes logs older than LOG_RETENTION_DAYS, device and operation alike', async () => {
    await t.addDevice('rt-2')
    const now = Date.now()
    const old = Array.from({ length: 1200 }, (_, i) => ({
      source: i % 2 ? 'device' : 'operation',
      device_id: 'rt-2',
      level: 'info',
      tag: null,
      message: `old ${i}`,
      ts: now - 4 * DAY + i,
    }))
    for (let i = 0; i < old.length; i += 500) await t.storage.db.insertInto('platform_logs').values(old.slice(i, i + 500)).execute()
    await t.device('POST', '/v1/device/rt-2/logs', { message: 'fresh', ts: now - 2 * DAY })
    const result = await job.runOnce(now)
    expect(result.logs).toBe(1200)
    const logs = (await t.admin('GET', '/api/admin/logs?device_id=rt-2&limit=1000')).json().logs
    expect(logs.map((l: { message: string }) => l.message)).toContain('fresh')
    expect(logs.some((l: { message: string }) => l.message.startsWith('old '))).toBe(false)
  })

  it('expires never-delivered commands past their TTL when it runs', async () => {
    await t.addDevice('rt-3')
    const queued = (await t.admin('POST', '/api/admin/device/rt-3/command', { action: 'ping', params: {} })).json().command
    // A pass a day later: the command time rules read the database's clock, here a day ahead.
    const db = t.storage.db
    const commands = new CommandQueue({ ...t.storage, clock: offsetClock(t.storage.clock, DAY / 1000) }, COMMAND_POLICY)
    await new RetentionJob({ db, telemetry: new TelemetryStore(t.storage), commands, telemetryRetentionDays: 7, logRetentionDays: 3 }, t.app.log).runOnce(Date.now() + DAY)
    const row = await t.storage.db.selectFrom('platform_commands').select('status').where('id', '=', queued.id).executeTakeFirstOrThrow()
    expect(row.status).toBe('expired')
  })

  it('drops expired binding codes', async () => {
    await t.addDevice('rt-4')
    await t.device('GET', '/v1/device/rt-4/bind/code')
    await job.runOnce(Date.now() + 6 * 60_000)
    const codes = await t.storage.db.selectFrom('platform_bind_codes').select('device_id').where('device_id', '=', 'rt-4').execute()
    expect(codes).toEqual([])
  })

  it('deletes login counters and rate-limit hits whose window ended, and revocations of sessions past their end, on the database clock', async () => {
    const db = t.storage.db
    const nowMs = Math.round((await t.storage.clock.read(db)) * 1000)
    const HOUR = 3_600_000
    await db
      .insertInto('login_counters')
      .values([
        { key: 'login:["198.51.100.1","old"]', failures: 3, window_start: nowMs - 2 * HOUR },
        { key: 'login-user:"old"', failures: 20, window_start: nowMs - 61 * 60_000 },
        { key: 'login:["198.51.100.1","fresh"]', failures: 1, window_start: nowMs - 60_000 },
      ])
      .execute()
    await db
      .insertInto('rate_hits')
      .values([
        { key: 'login-address:198.51.100.1', at: nowMs - 2 * HOUR },
        { key: 'bind-verify:x', at: nowMs - 61 * 60_000 },
        { key: 'login-address:198.51.100.2', at: nowMs - 1000 },
      ])
      .execute()
    await db
      .insertInto('revoked_sessions')
      .values([
        { sid: 'ended-long-ago', expires_at: nowMs - 1000 },
        { sid: 'still-valid', expires_at: nowMs + HOUR },
      ])
      .execute()
    const withClock = new RetentionJob(
      { db, telemetry: new TelemetryStore(t.storage), commands: new CommandQueue(t.storage, COMMAND_POLICY), telemetryRetentionDays: 7, logRetentionDays: 3, clock: t.storage.clock },
      t.app.log,
    )
    // (the app's own job may run a pass meanwhile: the rows left are what counts)
    expect((await withClock.runOnce()).limits).toBeLessThanOrEqual(5)
    expect((await db.selectFrom('login_counters').select('key').execute()).map((r) => r.key)).toEqual(['login:["198.51.100.1","fresh"]'])
    expect((await db.selectFrom('rate_hits').select('key').execute()).map((r) => r.key)).toEqual(['login-address:198.51.100.2'])
    expect((await db.selectFrom('revoked_sessions').select('sid').execute()).map((r) => r.sid)).toEqual(['still-valid'])
  })
})
