import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TelemetryStore, type TimedRecord } from '../../src/platform/telemetry/telemetry-store.js'
import pg from 'pg'
import { openStorage, type Storage } from '../../src/storage/storage.js'
import { DIALECTS, openTestStorage, testDatabase } from '../helpers/dialects.js'

const records = (n: number, base: number): TimedRecord[] => Array.from({ length: n }, (_, i) => ({ ts: base + i, values: { temp: i, ok: true } }))

describe.each(DIALECTS)('telemetry group commit on %s', (dialect) => {
  let storage: Awaited<ReturnType<typeof openTestStorage>>
  let store: TelemetryStore
  beforeAll(async () => {
    storage = await openTestStorage(dialect)
    store = new TelemetryStore(storage)
  })
  afterAll(() => storage.cleanup())

  const stored = async (deviceId: string) => (await store.series(deviceId, ['temp', 'ok'], { limit: 1000 })).temp!.length

  it('stores every batch of many concurrent writers, each answered with its own count', async () => {
    const now = Date.now()
    const writes = Array.from({ length: 40 }, (_, i) => store.insert(`dev-${i % 4}`, records(25, now + i * 100)))
    expect(await Promise.all(writes)).toEqual(Array(40).fill(50))
    for (let d = 0; d < 4; d++) expect(await stored(`dev-${d}`)).toBe(250)
  })

  it('fails only the bad batch of a group; its neighbours are committed', async () => {
    const now = Date.now()
    const bad = [{ ts: null, values: { temp: 1 } }] as unknown as TimedRecord[]
    const results = await Promise.allSettled([
      store.insert('g-1', records(10, now)),
      store.insert('g-2', records(10, now)),
      store.insert('g-bad', bad),
      store.insert('g-3', records(10, now)),
    ])
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled'])
    for (const id of ['g-1', 'g-2', 'g-3']) expect(await stored(id)).toBe(10)
    expect(await store.keys('g-bad')).toEqual([])
  })

  it('refuses a batch with 503 server_busy while the queue behind a commit is full, storing none of it', async () => {
    const small = new TelemetryStore(storage, { maxQueuedPoints: 100 })
    const now = Date.now()
    // The first batch is committing; the next waits (60 + 30 points queued); one more would pass 100.
    const first = small.insert('q-1', records(30, now))
    const second = small.insert('q-2', records(30, now))
    const third = small.insert('q-3', records(15, now))
    const refused = small.insert('q-4', records(10, now))
    await expect(refused).rejects.toMatchObject({ code: 'server_busy', statusCode: 503, extra: { retry_after: 1 } })
    expect(await Promise.all([first, second, third])).toEqual([60, 60, 30])
    expect(await store.keys('q-4')).toEqual([])
    // Once the queue drained, batches are taken again.
    expect(await small.insert('q-4', records(10, now))).toBe(20)
  })
})

describe.each(DIALECTS)('telemetry batches of one event-loop turn on %s', (dialect) => {
  let storage: Awaited<ReturnType<typeof openTestStorage>>
  beforeAll(async () => {
    storage = await openTestStorage(dialect)
  })
  afterAll(() => storage.cleanup())

  /** The store's database handle, counting the transactions the store opens on it. */
  const counted = () => {
    const count = { transactions: 0 }
    const db = new Proxy(storage.db, {
      get(target, property) {
        if (property === 'transaction') count.transactions++
        const value = Reflect.get(target, property, target) as unknown
        // Kysely keeps its state in private fields: its methods must run on the real instance.
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value
      },
    })
    return { db, count }
  }

  it('are committed in one transaction when the store gathers the turn (as on SQLite, where a commit never yields)', async () => {
    const { db, count } = counted()
    const store = new TelemetryStore({ db, rowId: storage.rowId, dialect: storage.dialect }, { gatherTurn: true })
    const now = Date.now()
    const writes = Array.from({ length: 20 }, (_, i) => store.insert(`turn-${i}`, records(5, now)))
    expect(await Promise.all(writes)).toEqual(Array(20).fill(10))
    expect(count.transactions).toBe(1)
    for (let i = 0; i < 20; i++) expect((await store.series(`turn-${i}`, ['temp'], { limit: 10 })).temp).toHaveLength(5)
  })

  it('start a writer at once without gathering: the first batch is not held for the others', async () => {
    const { db, count } = counted()
    const store = new TelemetryStore({ db, rowId: storage.rowId, dialect: storage.dialect })
    const now = Date.now()
    await Promise.all(Array.from({ length: 20 }, (_, i) => store.insert(`now-${i}`, records(5, now))))
    expect(count.transactions).toBe(2)
  })

  it('still fail only the bad batch of a gathered group', async () => {
    const store = new TelemetryStore(storage, { gatherTurn: true })
    const bad = [{ ts: null, values: { temp: 1 } }] as unknown as TimedRecord[]
    const results = await Promise.allSettled([store.insert('gt-1', records(3, Date.now())), store.insert('gt-bad', bad), store.insert('gt-2', records(3, Date.now()))])
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    expect(await store.keys('gt-bad')).toEqual([])
  })
})

describe.each(DIALECTS)('telemetry with several writers on %s', (dialect) => {
  let storage: Awaited<ReturnType<typeof openTestStorage>>
  let store: TelemetryStore
  beforeAll(async () => {
    storage = await openTestStorage(dialect)
    store = new TelemetryStore(storage, { writers: 4 })
  })
  afterAll(() => storage.cleanup())

  it('stores every point of concurrent batches with overlapping devices and keys, the newest value last', async () => {
    const now = Date.now()
    const keysOf = (i: number) => ['a', 'b', 'c', 'd'].filter((_, k) => (i + k) % 3 !== 0)
    const batches = Array.from({ length: 120 }, (_, i) => ({
      device: `w-${i % 5}`,
      records: Array.from({ length: 10 }, (_, r) => ({ ts: now + i * 10 + r, values: Object.fromEntries(keysOf(i).map((k) => [k, i * 10 + r])) })),
    }))
    const counts = await Promise.all(batches.map((b) => store.insert(b.device, b.records)))
    expect(counts).toEqual(batches.map((b) => b.records.length * Object.keys(b.records[0]!.values).length))
    for (let d = 0; d < 5; d++) {
      const mine = batches.map((b, i) => ({ ...b, i })).filter((b) => b.device === `w-${d}`)
      const series = await store.series(`w-${d}`, ['a', 'b', 'c', 'd'], { limit: 10_000 })
      for (const key of ['a', 'b', 'c', 'd']) {
        const expected = mine.filter((b) => keysOf(b.i).includes(key)).flatMap((b) => b.records.map((r) => [r.ts, r.values[key]]))
        expect(series[key]).toEqual(expected)
        const latest = (await store.latest(`w-${d}`))[key]
        if (expected.length > 0) expect(latest).toEqual({ ts: expected.at(-1)![0], value: expected.at(-1)![1] })
      }
    }
  })

  it('fails only the bad batch, all of it, while other writers commit theirs', async () => {
    const now = Date.now()
    const bad = [...records(5, now), { ts: null, values: { temp: 1 } }] as unknown as TimedRecord[]
    const results = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => store.insert(`x-${i}`, i === 7 ? bad : records(5, now))))
    expect(results.map((r) => r.status)).toEqual(Array.from({ length: 12 }, (_, i) => (i === 7 ? 'rejected' : 'fulfilled')))
    expect(await store.keys('x-7')).toEqual([])
    for (const i of [0, 6, 8, 11]) expect((await store.series(`x-${i}`, ['temp'], { limit: 100 })).temp).toHaveLength(5)
  })
})

describe.skipIf(!DIALECTS.includes('postgres'))('telemetry writers on PostgreSQL', () => {
  const database = testDatabase('postgres')
  let storage: Storage
  beforeAll(async () => {
    storage = await openStorage(database.target)
    await storage.migrate()
  })
  afterAll(async () => {
    await storage.close()
    await database.cleanup()
  })

  it('commits other devices’ batches while one batch waits for a lock', async () => {
    const store = new TelemetryStore(storage, { writers: storage.concurrentWriters })
    const now = Date.now()
    await store.insert('locked', records(1, now))
    const target = database.target as { url: string; schema: string }
    const holder = new pg.Client({ connectionString: target.url, options: `-c search_path=${target.schema}` })
    await holder.connect()
    await holder.query('begin')
    await holder.query(`select * from platform_telemetry_series where device_id = 'locked' for update`)
    let blockedDone = false
    const blocked = store.insert('locked', records(3, now + 10)).then((n) => ((blockedDone = true), n))
    expect(await store.insert('free', records(3, now))).toBe(6)
    expect(blockedDone).toBe(false)
    await holder.query('commit')
    await holder.end()
    expect(await blocked).toBe(6)
  })
})
