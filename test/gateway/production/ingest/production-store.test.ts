import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ProductionStore } from '../../../../src/gateway/production/ingest/production-store.js'
import { openStorage, type Storage } from '../../../../src/storage/storage.js'
import { DIALECTS, testDatabase, type TestDatabase } from '../../../helpers/dialects.js'
import { addMachine, DAY, HOUR, referenceSeconds, sameSeconds, storedSeconds, type Seconds } from './production-helpers.js'

type Event = { id: string } & Record<string, unknown>

describe.each(DIALECTS)('production storage (§16) on %s', (dialect) => {
  let database: TestDatabase
  let storage: Storage
  let store: ProductionStore
  /** The start of the hour five hours ago: every event below is well inside the accepted window. */
  let H: number
  beforeAll(async () => {
    database = testDatabase(dialect)
    storage = await openStorage(database.target)
    await storage.migrate()
    store = new ProductionStore(storage)
    H = Math.floor(Date.now() / 1000 / HOUR) * HOUR - 5 * HOUR
  })
  afterAll(async () => {
    await storage.close()
    await database.cleanup()
  })

  const state = (id: string, ts: number, s: string, reason?: string): Event => ({ id, ts, kind: 'state', state: s, ...(reason ? { reason } : {}) })
  const count = async (table: 'production_events' | 'production_states', deviceId: string) =>
    Number((await storage.db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).where('device_id', '=', deviceId).executeTakeFirstOrThrow()).n)

  it('splits state intervals by ts whatever the arrival order: late events correct the hours they touch', async () => {
    const id = 'st-order'
    await addMachine(storage, id)
    const f1 = await store.storeFrame(id, [state('s1', H + 600, 'productive')])
    expect(f1).toMatchObject({ ids: ['s1'], rejected: [], inserted: 1, changed: { state: 'productive', reason: null, since: H + 600 } })
    expect((await store.storeFrame(id, [state('s3', H + 4800, 'standby')])).changed).toEqual({ state: 'standby', reason: null, since: H + 4800 })
    // Late: between s1 and s3; the current state stays standby, so no change is reported.
    expect((await store.storeFrame(id, [state('s2', H + 1800, 'unscheduled_down', 'parts_exhausted')])).changed).toBeUndefined()
    expect((await store.storeFrame(id, [state('s4', H + 7200, 'productive')])).changed).toMatchObject({ state: 'productive', since: H + 7200 })
    // Late: older than every other, in the hour before.
    expect((await store.storeFrame(id, [state('s0', H - 600, 'engineering')])).changed).toBeUndefined()

    // Hand-computed: engineering [H-600, H+600), productive [H+600, H+1800), unscheduled_down
    // [H+1800, H+4800), standby [H+4800, H+7200); productive from H+7200 is still open.
    const expected = new Map<number, Seconds>([
      [H - HOUR, { engineering: 600 }],
      [H, { engineering: 600, productive: 1200, unscheduled_down: 1800 }],
      [H + HOUR, { unscheduled_down: 1200, standby: 2400 }],
    ])
    expect(sameSeconds(await storedSeconds(storage, id), expected)).toBeUndefined()
    const daily = new Map<number, Seconds>()
    for (const [start, seconds] of expected) {
      const day = Math.floor(start / DAY) * DAY
      const sum = daily.get(day) ?? {}
      for (const [s, v] of Object.entries(seconds)) sum[s] = (sum[s] ?? 0) + v
      daily.set(day, sum)
    }
    expect(sameSeconds(await storedSeconds(storage, id, 'production_daily'), daily)).toBeUndefined()
    expect(await storage.db.selectFrom('production_current').selectAll().where('device_id', '=', id).executeTakeFirst()).toMatchObject({ state: 'productive', since: H + 7200 })
    const reasons = await storage.db.selectFrom('production_states').select(['event_id', 'reason']).where('device_id', '=', id).where('event_id', '=', 's2').execute()
    expect(reasons).toEqual([{ event_id: 's2', reason: 'parts_exhausted' }])
  })

  it('makes a machine offline when its link closes (its own link only), which closes the open interval', async () => {
    const id = 'st-offline'
    await addMachine(storage, id)
    await store.storeFrame(id, [state('a', H + 1800, 'productive')])
    expect(await store.linkClosed(id, 7)).toBeUndefined() // a newer link's generation: not this machine's current link
    expect(await count('production_states', id)).toBe(1)
    const before = Date.now() / 1000
    const offline = await store.linkClosed(id, 0)
    const after = Date.now() / 1000
    expect(offline?.state).toBe('offline')
    expect(offline!.since).toBeGreaterThan(before - 5)
    expect(offline!.since).toBeLessThan(after + 5)
    expect(await store.linkClosed(id, 0)).toBeUndefined() // offline already
    const productive = [...(await storedSeconds(storage, id)).values()].reduce((sum, s) => sum + (s.productive ?? 0), 0)
    expect(productive).toBeCloseTo(offline!.since - (H + 1800), 3)
    expect(await storage.db.selectFrom('production_current').selectAll().where('device_id', '=', id).executeTakeFirst()).toMatchObject({ state: 'offline', reason: null })
    // Back: a state after the close ends the offline time; offline seconds are never stored.
    const back = await store.storeFrame(id, [state('b', offline!.since + 10, 'standby')])
    expect(back.changed).toMatchObject({ state: 'standby' })
    expect([...(await storedSeconds(storage, id)).values()].some((s) => 'offline' in s)).toBe(false)
  })

  it('records many links closing at once (an instance stopping): each machine of its current link once, the others untouched', async () => {
    const ids = Array.from({ length: 150 }, (_, i) => `st-mass-${String(i).padStart(3, '0')}`)
    for (const id of ids) await addMachine(storage, id)
    const stale = new Set(ids.filter((_, i) => i % 10 === 3)) // taken over: a newer link was claimed
    const offlineAlready = new Set(ids.filter((_, i) => i % 10 === 7))
    await storage.db.updateTable('devices').set({ link_generation: 5 }).where('device_id', 'in', [...stale]).execute()
    for (const [i, id] of ids.entries()) await store.storeFrame(id, [state(`m${i}`, H + 60 * (i % 50), 'productive')])
    for (const id of offlineAlready) expect((await store.linkClosed(id, 0))?.state).toBe('offline')
    const statesBefore = new Map(await Promise.all(ids.map(async (id) => [id, await count('production_states', id)] as const)))

    // Every close at once, and the first machine closed twice: its change is answered once.
    const results = await Promise.all([...ids.map((id) => store.linkClosed(id, 0)), store.linkClosed(ids[0]!, 0)])

    const closed = ids.filter((id) => !stale.has(id) && !offlineAlready.has(id))
    expect(closed.length).toBe(120)
    for (const [i, id] of ids.entries()) {
      const expectClosed = closed.includes(id)
      expect(results[i]?.state, id).toBe(expectClosed ? 'offline' : undefined)
      expect(await count('production_states', id), id).toBe(statesBefore.get(id)! + (expectClosed ? 1 : 0))
      const current = await storage.db.selectFrom('production_current').select('state').where('device_id', '=', id).executeTakeFirstOrThrow()
      expect(current.state, id).toBe(stale.has(id) ? 'productive' : 'offline')
    }
    expect(results.at(-1)).toBeUndefined()
    // Closes that arrive together share transactions (each reads the clock once): 120 closes, a
    // handful of times; one transaction each would give about as many times as closes.
    expect(new Set(results.filter((r) => r !== undefined).map((r) => r.since)).size).toBeLessThanOrEqual(10)
    // Each closed machine's productive interval ends at its close: the seconds from its state to the close.
    for (const [i, id] of ids.entries()) {
      if (!closed.includes(id)) continue
      const productive = [...(await storedSeconds(storage, id)).values()].reduce((sum, s) => sum + (s.productive ?? 0), 0)
      expect(productive, id).toBeCloseTo(results[i]!.since - (H + 60 * (i % 50)), 3)
    }
  })

  it('counts placements, feeders, nozzles, faults and completed jobs in the hour and day of their ts; jobs in any order', async () => {
    const id = 'st-counts'
    await addMachine(storage, id)
    const frame: Event[] = [
      { id: 'je', ts: H + 3000, kind: 'job_ended', job_id: 'J1', result: 'completed', boards_done: 5 },
      { id: 'p1', ts: H + 100, kind: 'placements', placed: 100, missed: 2, job_id: 'J1', feeders: [{ feeder: 'F1', placed: 60, missed: 2 }, { feeder: 'F2', placed: 40, missed: 0 }], nozzles: [{ nozzle: 'N1', placed: 100, missed: 2 }] },
      { id: 'f1', ts: H + 300, kind: 'fault', fault: 'pickup_error', feeder: 'F1', message: 'no part' },
    ]
    expect((await store.storeFrame(id, frame)).ids).toEqual(['je', 'p1', 'f1'])
    await store.storeFrame(id, [
      { id: 'p2', ts: H + 200, kind: 'placements', placed: 50, missed: 1, job_id: 'J1', feeders: [{ feeder: 'F1', placed: 50, missed: 1 }] },
      { id: 'js', ts: H + 50, kind: 'job_started', job_id: 'J1', order_id: 'O-7', program: 'top', boards_planned: 5 },
      { id: 'p3', ts: H + HOUR + 5, kind: 'placements', placed: 7, missed: 0 },
      { id: 'f2', ts: H + 400, kind: 'fault', fault: 'pickup_error' },
      { id: 'f3', ts: H + 500, kind: 'fault', fault: 'collision' },
    ])
    const hour = await storage.db.selectFrom('production_hourly').selectAll().where('device_id', '=', id).where('hour_start', '=', H).executeTakeFirstOrThrow()
    expect({ ...hour, feeders: JSON.parse(hour.feeders), nozzles: JSON.parse(hour.nozzles), faults: JSON.parse(hour.faults) }).toMatchObject({
      placed: 150,
      missed: 3,
      jobs_completed: 1,
      faults: { pickup_error: 2, collision: 1 },
      feeders: [{ feeder: 'F1', placed: 110, missed: 3 }, { feeder: 'F2', placed: 40, missed: 0 }],
      nozzles: [{ nozzle: 'N1', placed: 100, missed: 2 }],
    })
    const next = await storage.db.selectFrom('production_hourly').select(['placed', 'missed']).where('device_id', '=', id).where('hour_start', '=', H + HOUR).executeTakeFirstOrThrow()
    expect(next).toEqual({ placed: 7, missed: 0 })
    const days = await storage.db.selectFrom('production_daily').select(['placed', 'missed', 'jobs_completed']).where('device_id', '=', id).execute()
    expect(days.reduce((s, d) => s + d.placed, 0)).toBe(157)
    expect(days.reduce((s, d) => s + d.jobs_completed, 0)).toBe(1)
    expect(await storage.db.selectFrom('production_jobs').selectAll().where('device_id', '=', id).execute()).toEqual([
      { device_id: id, job_id: 'J1', order_id: 'O-7', program: 'top', started_at: H + 50, ended_at: H + 3000, result: 'completed', boards_planned: 5, boards_done: 5, placed: 150, missed: 3 },
    ])
  })

  it('keeps a job’s earliest start and latest end, whichever frame brings them, and adds its placements', async () => {
    const id = 'st-jobs'
    await addMachine(storage, id)
    const start = (eid: string, ts: number, order: string) => ({ id: eid, ts, kind: 'job_started', job_id: 'J', order_id: order, program: order, boards_planned: ts })
    const end = (eid: string, ts: number, result: string) => ({ id: eid, ts, kind: 'job_ended', job_id: 'J', result, boards_done: ts })
    const placements = (eid: string, ts: number) => ({ id: eid, ts, kind: 'placements', placed: 3, missed: 1, job_id: 'J' })
    await store.storeFrame(id, [placements('p1', H + 20), end('e1', H + 500, 'aborted')] as never)
    await store.storeFrame(id, [start('s1', H + 10, 'late'), placements('p2', H + 30)] as never)
    await store.storeFrame(id, [start('s2', H + 5, 'first'), end('e2', H + 400, 'completed'), start('s3', H + 8, 'second')] as never)
    await store.storeFrame(id, [end('e3', H + 600, 'completed'), start('s4', H + 9, 'third'), placements('p3', H + 40)] as never)
    expect(await storage.db.selectFrom('production_jobs').selectAll().where('device_id', '=', id).execute()).toEqual([
      { device_id: id, job_id: 'J', order_id: 'first', program: 'first', started_at: H + 5, boards_planned: H + 5, ended_at: H + 600, result: 'completed', boards_done: H + 600, placed: 9, missed: 3 },
    ])
  })

  it('stores a repeated id once and acknowledges it again; the rollups do not count it twice', async () => {
    const id = 'st-repeat'
    await addMachine(storage, id)
    const frame: Event[] = [
      { id: 'p', ts: H + 10, kind: 'placements', placed: 10, missed: 1 },
      state('s', H + 20, 'productive'),
      state('t', H + 80, 'standby'),
    ]
    expect(await store.storeFrame(id, frame)).toMatchObject({ ids: ['p', 's', 't'], inserted: 3 })
    expect(await store.storeFrame(id, [...frame, { id: 'p', ts: H + 10, kind: 'placements', placed: 10, missed: 1 }])).toEqual({ ids: ['p', 's', 't'], rejected: [], inserted: 0, changed: undefined })
    const hour = await storage.db.selectFrom('production_hourly').selectAll().where('device_id', '=', id).executeTakeFirstOrThrow()
    expect(hour).toMatchObject({ placed: 10, missed: 1, s_productive: 60 })
    // An id already stored is acknowledged even when its copy is no longer acceptable (too old now, say).
    expect(await store.storeFrame(id, [{ id: 'p', ts: 1, kind: 'placements', placed: 10, missed: 1 }])).toMatchObject({ ids: ['p'], rejected: [] })
  })

  it('rejects each bad event with its reason and stores none of it; the good ones of the frame are stored', async () => {
    const id = 'st-reject'
    await addMachine(storage, id)
    const now = Date.now() / 1000
    const bad: [Event, RegExp][] = [
      [{ id: 'b1', ts: H, kind: 'telemetry' }, /unknown kind "telemetry"/],
      [{ id: 'b2', ts: H, kind: 'state', state: 'running' }, /state/],
      [{ id: 'b3', ts: H, kind: 'state', state: 'standby', reason: 'r'.repeat(65) }, /reason/],
      [{ id: 'b4', ts: now - 31 * DAY, kind: 'state', state: 'standby' }, /more than 30 days old/],
      [{ id: 'b5', ts: now + 600, kind: 'state', state: 'standby' }, /more than 5 minutes ahead/],
      [{ id: 'b6', ts: H, kind: 'placements', placed: 1, missed: -1 }, /missed/],
      [{ id: 'b7', ts: H, kind: 'placements', placed: 1.5, missed: 0 }, /placed/],
      [{ id: 'b8', ts: H, kind: 'job_ended', job_id: 'J', result: 'done', boards_done: 1 }, /result/],
      [{ id: 'b9', ts: H, kind: 'job_started' }, /job_id/],
      [{ id: 'b10', ts: H, kind: 'fault', fault: 'fire' }, /fault/],
      [{ id: 'b11', ts: H, kind: 'fault', fault: 'other', message: 'm'.repeat(257) }, /message/],
      [{ id: 'b12', ts: String(H), kind: 'state', state: 'standby' }, /ts/],
      [{ id: 'b13', kind: 'state', state: 'standby' }, /ts/],
      [{ id: 'b14', ts: H, kind: 'placements', placed: 1, missed: 0, feeders: [{ feeder: 'F1', placed: 1 }] }, /feeders\.0\.missed|missed/],
      [{ id: 'b15\u0000', ts: H, kind: 'state', state: 'standby' }, /NUL/],
      [{ id: 'b16', ts: H, kind: 'job_ended', job_id: 'J', result: 'completed', boards_done: -2 }, /boards_done/],
      [{ id: 'b17', ts: H, kind: 'placements', placed: 3_000_000_000, missed: 0 }, /placed/],
    ]
    const good: Event = { id: 'g', ts: H + 1, kind: 'placements', placed: 4, missed: 0 }
    const answer = await store.storeFrame(id, [...bad.map(([e]) => e), good])
    expect(answer.ids).toEqual(['g'])
    expect(answer.rejected.map((r) => r.id)).toEqual(bad.map(([e]) => e.id))
    for (const [i, [, reason]] of bad.entries()) expect(answer.rejected[i]!.error).toMatch(reason)
    expect(await count('production_events', id)).toBe(1)
    expect(await count('production_states', id)).toBe(0)
    const hour = await storage.db.selectFrom('production_hourly').select(['placed', 'faults']).where('device_id', '=', id).execute()
    expect(hour).toEqual([{ placed: 4, faults: '{}' }])
  })

  it('stores each event once when many frames with the same ids race, from two connections pools', async () => {
    const id = 'st-race'
    await addMachine(storage, id)
    // PostgreSQL: a second pool on the same database, as a second instance has. SQLite: one writer.
    const other = dialect === 'postgres' ? await openStorage(database.target) : storage
    try {
      const stores = [store, new ProductionStore(other)]
      const sequence: { id: string; ts: number; state: string }[] = []
      const states = ['productive', 'standby', 'unscheduled_down', 'engineering']
      for (let i = 0; i < 30; i++) sequence.push({ id: `s${i}`, ts: H + ((i * 7919) % 30) * 400 + 13, state: states[i % states.length]! })
      const events = (k: number): Event[] => {
        const out: Event[] = []
        for (let j = 0; j < 10; j++) {
          const i = (k * 3 + j) % 30
          out.push({ id: `p${i}`, ts: H + i * 100, kind: 'placements', placed: 10, missed: 1 })
          out.push({ ...sequence[i]!, kind: 'state' })
        }
        return out
      }
      const answers = await Promise.all(Array.from({ length: 20 }, (_, k) => stores[k % 2]!.storeFrame(id, events(k))))
      for (const [k, answer] of answers.entries()) expect(answer.ids.length, `frame ${k}`).toBe(20)
      expect(answers.reduce((sum, a) => sum + a.inserted, 0)).toBe(60)
      expect(await count('production_events', id)).toBe(60)
      expect(await count('production_states', id)).toBe(30)
      const placed = await storage.db.selectFrom('production_hourly').select(['hour_start', 'placed', 'missed']).where('device_id', '=', id).execute()
      expect(placed.reduce((s, r) => s + r.placed, 0)).toBe(300)
      expect(placed.reduce((s, r) => s + r.missed, 0)).toBe(30)
      expect(sameSeconds(await storedSeconds(storage, id), referenceSeconds(sequence, HOUR))).toBeUndefined()
      expect(sameSeconds(await storedSeconds(storage, id, 'production_daily'), referenceSeconds(sequence, DAY))).toBeUndefined()
      const newest = [...sequence].sort((a, b) => b.ts - a.ts)[0]!
      expect(await storage.db.selectFrom('production_current').select(['state', 'since']).where('device_id', '=', id).executeTakeFirst()).toEqual({ state: newest.state, since: newest.ts })
    } finally {
      if (other !== storage) await other.close()
    }
  })
})
