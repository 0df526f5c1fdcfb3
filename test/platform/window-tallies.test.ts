import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { deleteDeviceAndData, insertDevice } from '../../src/platform/devices/device-store.js'
import { clearLogs, countDeviceErrorsSince, insertDeviceLogBatch, type NewLog } from '../../src/platform/logs/log-store.js'
import { TelemetryStore, type TimedRecord } from '../../src/platform/telemetry/telemetry-store.js'
import type { Storage } from '../../src/storage/storage.js'
import { dropTalliesBefore, TALLY_BUCKET_MS, type TallyKind } from '../../src/storage/window-tallies.js'
import { DIALECTS, openTwoInstances } from '../helpers/dialects.js'

const MIN = TALLY_BUCKET_MS
/** A minute boundary, so the tests place points just before and after one. */
const T0 = 1_700_000_040_000 - (1_700_000_040_000 % MIN)
const bucketOf = (ts: number) => Math.floor(ts / MIN) * MIN

/** What the tallies say per minute (zero minutes left out). */
async function tallied(storage: Storage, kind: TallyKind): Promise<Record<number, number>> {
  const rows = await storage.db
    .selectFrom('platform_window_tallies')
    .select((eb) => ['bucket', eb.fn.sum<number>('n').as('n')])
    .where('kind', '=', kind)
    .groupBy('bucket')
    .execute()
  return Object.fromEntries(rows.filter((r) => Number(r.n) !== 0).map((r) => [Number(r.bucket), Number(r.n)]))
}

/** What the rows say per minute. */
function perMinute(times: number[]): Record<number, number> {
  const counts: Record<number, number> = {}
  for (const ts of times) counts[bucketOf(ts)] = (counts[bucketOf(ts)] ?? 0) + 1
  return counts
}

const pointTimes = async (storage: Storage) => (await storage.db.selectFrom('platform_telemetry').select('ts').execute()).map((r) => Number(r.ts))
const errorTimes = async (storage: Storage) =>
  (await storage.db.selectFrom('platform_logs').select('ts').where('source', '=', 'device').where('level', '=', 'error').execute()).map((r) => Number(r.ts))

/** Every way the windows can start: on a minute, just after, inside, just before the next. */
const WINDOW_STARTS = [T0, T0 + 1, T0 + 30_000, T0 + MIN - 1, T0 + MIN, T0 + 3 * MIN + 7]

describe.each(DIALECTS)('the summary tallies per minute on %s', (dialect) => {
  /** Two handles on one database, as two instances have. */
  let a: Storage
  let b: Storage
  let cleanup: () => Promise<void>
  beforeAll(async () => {
    ;({ a, b, cleanup } = await openTwoInstances(dialect))
  })
  afterAll(() => cleanup())

  it('count every point of concurrent batches from several writers, and the 24 h count is exact at any start inside a minute', async () => {
    const stores = [new TelemetryStore(a), new TelemetryStore(a), new TelemetryStore(b), new TelemetryStore(b)]
    // 120 batches of 2 devices' points spread over 6 minutes around T0, all in flight at once.
    const writes = Array.from({ length: 120 }, (_, i) => {
      const records: TimedRecord[] = Array.from({ length: 7 }, (_, j) => ({ ts: T0 - 2 * MIN + ((i * 7919 + j * 104_729) % (6 * MIN)), values: { t: i, h: j } }))
      return stores[i % stores.length]!.insert(`wt-${i % 2}`, records)
    })
    expect((await Promise.all(writes)).reduce((s, n) => s + n, 0)).toBe(120 * 7 * 2)
    const times = await pointTimes(a)
    expect(await tallied(a, 'telemetry')).toEqual(perMinute(times))
    for (const since of WINDOW_STARTS) {
      expect(await stores[0]!.countSince(since), `since T0+${since - T0}`).toBe(times.filter((ts) => ts >= since).length)
    }
  })

  it('take off the points of a deleted device and the points retention prunes, to the millisecond of the cutoff', async () => {
    const store = new TelemetryStore(a)
    await store.insert('wt-gone', [T0 - 1, T0, T0 + 1, T0 + MIN + 5].map((ts) => ({ ts, values: { v: 1, w: 2 } })))
    await a.db.transaction().execute((tx) => deleteDeviceAndData(tx, 'wt-gone'))
    let times = await pointTimes(a)
    expect(await tallied(a, 'telemetry')).toEqual(perMinute(times))

    // A cutoff inside a minute: that minute keeps the count of its points after the cutoff.
    const cutoff = T0 + 20_000
    for (let from: number | undefined, step = { deleted: 1 } as { deleted: number; next?: number }; step.deleted > 0; from = step.next) {
      step = await store.pruneBatch(cutoff, 50, from)
    }
    await dropTalliesBefore(a.db, 'telemetry', cutoff) // as the retention job does once it reached the cutoff
    times = await pointTimes(a)
    expect(times.every((ts) => ts >= cutoff)).toBe(true)
    expect(await tallied(a, 'telemetry')).toEqual(perMinute(times))
    for (const since of WINDOW_STARTS) expect(await store.countSince(since)).toBe(times.filter((ts) => ts >= since).length)
  })

  it('count device errors, not other levels or operation entries, through inserts, clearing and device delete', async () => {
    const entry = (device_id: string, level: NewLog['level'], ts: number, source: NewLog['source'] = 'device'): NewLog => ({ source, device_id, level, tag: null, message: 'm', ts })
    for (let i = 0; i < 4; i++) await insertDevice(a.db, { device_id: `we-${i}`, model: 'm', token_hash: null }, T0)
    const writers = [a, b, a, b].map((s, i) =>
      insertDeviceLogBatch(s.db, s.dialect, `we-${i}`, [
        ...Array.from({ length: 30 }, (_, j) => entry(`we-${i}`, j % 3 === 0 ? 'error' : 'info', T0 - MIN + j * 4001)),
        entry(`we-${i}`, 'error', T0 + i, 'operation'),
      ]),
    )
    await Promise.all(writers)
    await insertDeviceLogBatch(a.db, a.dialect, 'we-0', [entry('we-0', 'error', T0 + MIN - 1)]) // one entry
    const same = async () => {
      const times = await errorTimes(a)
      expect(await tallied(a, 'device_errors')).toEqual(perMinute(times))
      for (const since of WINDOW_STARTS) expect(await countDeviceErrorsSince(a.db, since)).toBe(times.filter((ts) => ts >= since).length)
    }
    await same()
    await a.db.transaction().execute((tx) => clearLogs(tx, { device_id: 'we-1' }))
    await same()
    await a.db.transaction().execute((tx) => clearLogs(tx, { source: 'operation' }))
    await same()
    await a.db.transaction().execute((tx) => deleteDeviceAndData(tx, 'we-2'))
    await same()
    await a.db.transaction().execute((tx) => clearLogs(tx, {}))
    await same()
    expect(await tallied(a, 'device_errors')).toEqual({})
  })
})
