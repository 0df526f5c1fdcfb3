import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ProductionStore } from '../../../../src/gateway/production/ingest/production-store.js'
import type { Storage } from '../../../../src/storage/storage.js'
import { DIALECTS, openTestStorage } from '../../../helpers/dialects.js'
import { addMachine, DAY, HOUR } from './production-helpers.js'

/** A seeded generator: the same events on every run, so a failure can be replayed. */
function random(seed: number) {
  let s = seed >>> 0
  return () => ((s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0) / 2 ** 32)
}

type Event = Record<string, unknown> & { id: string; ts: number }
const STATES = ['productive', 'standby', 'engineering', 'unscheduled_down', 'scheduled_down', 'non_scheduled']
const TABLES = {
  production_states: ['ts', 'event_id'],
  production_current: [],
  production_hourly: ['hour_start'],
  production_daily: ['day_start'],
  production_jobs: ['job_id'],
} as const

/**
 * A machine's events as it sends them: mostly in order (a frame's new states all after the
 * current one, which reads no neighbourhood), some frames late by minutes to days, some states at
 * the ts of another (ties go by event id), jobs started and ended, placements and faults. Whole
 * seconds, so the seconds of every interval add up exactly whatever the order.
 */
function machineEvents(seed: number, now: number): Event[][] {
  const next = random(seed)
  const frames: Event[][] = []
  let clock = now - 3 * DAY
  for (let f = 0; f < 60; f++) {
    const late = next() < 0.25
    const events: Event[] = []
    for (let i = 0; i < 1 + Math.floor(next() * 8); i++) {
      // In order, one event in four at the ts of the one before, a frame's first one in two.
      if (!late && next() < (i === 0 ? 0.5 : 0.75)) clock += 1 + Math.floor(next() * 40 * 60)
      const ts = late ? clock - Math.floor(next() * (next() < 0.5 ? HOUR : 2 * DAY)) : clock
      // Later frames' ids sort first: a state at the ts of the current one goes before it.
      const id = `e${String(999 - f)}-${i}`
      // A job's starts (or ends) at one ts say the same: which one is kept does not depend on the order they came in.
      const job = `job-${Math.floor(ts / (4 * HOUR))}`
      const r = next()
      if (r < 0.35) events.push({ id, ts, kind: 'state', state: STATES[Math.floor(next() * STATES.length)]!, ...(next() < 0.3 ? { reason: 'r' } : {}) })
      else if (r < 0.75) events.push({ id, ts, kind: 'placements', placed: 1 + Math.floor(next() * 40), missed: Math.floor(next() * 3), job_id: job, feeders: [{ feeder: `F${Math.floor(next() * 3)}`, placed: 2, missed: 0 }], nozzles: [] })
      else if (r < 0.85) events.push({ id, ts, kind: 'fault', fault: next() < 0.5 ? 'pickup_error' : 'jam' })
      else if (r < 0.93) events.push({ id, ts, kind: 'job_started', job_id: job, order_id: `O-${job}`, boards_planned: 10 })
      else events.push({ id, ts, kind: 'job_ended', job_id: job, result: 'completed', boards_done: 10 })
    }
    frames.push(events)
  }
  return frames
}

describe.each(DIALECTS)('a machine’s new states after its current one (§16) on %s', (dialect) => {
  let storage: Storage & { cleanup(): Promise<void> }
  let store: ProductionStore
  beforeAll(async () => {
    storage = await openTestStorage(dialect)
    store = new ProductionStore(storage)
  })
  afterAll(() => storage.cleanup())

  /** Every production row of a machine, its device id left out, in a stable order. */
  const rowsOf = async (deviceId: string) => {
    const out: Record<string, unknown[]> = {}
    for (const [table, order] of Object.entries(TABLES)) {
      let query = storage.db
        .selectFrom(table as keyof typeof TABLES)
        .selectAll()
        .where('device_id', '=', deviceId)
      for (const column of order) query = query.orderBy(column as never)
      out[table] = (await query.execute()).map(({ device_id: _, ...row }) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v) ? Number(v) : v])))
    }
    return out
  }

  it('leave the same rows as the same events stored newest first, each frame reading its neighbours', async () => {
    const now = Math.floor(Date.now() / 1000)
    for (const seed of [1, 2, 3]) {
      const frames = machineEvents(seed, now)
      const arriving = `arriving-${seed}`
      const newestFirst = `newest-first-${seed}`
      await addMachine(storage, arriving)
      await addMachine(storage, newestFirst)
      await addMachine(storage, `${arriving}-other`)
      // Two machines' frames at once: the group commits mix in-order and late frames.
      const other = machineEvents(seed + 100, now)
      for (const [i, events] of frames.entries()) await Promise.all([store.storeFrame(arriving, events as never), store.storeFrame(`${arriving}-other`, other[i]! as never)])
      // Sorted newest first and sent in frames of five, each frame lies before every stored state.
      const sorted = frames.flat().sort((a, b) => b.ts - a.ts || (a.id < b.id ? 1 : -1))
      for (let i = 0; i < sorted.length; i += 5) await store.storeFrame(newestFirst, sorted.slice(i, i + 5) as never)

      const [actual, expected] = [await rowsOf(arriving), await rowsOf(newestFirst)]
      expect(actual.production_states!.length).toBeGreaterThan(20)
      expect(actual.production_hourly!.length).toBeGreaterThan(20)
      for (const table of Object.keys(TABLES)) expect(actual[table], `seed ${seed}: ${table}`).toEqual(expected[table])
    }
  })
})
