import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TelemetryStore, type TimedRecord } from '../../src/platform/telemetry/telemetry-store.js'
import { DIALECTS, openTestStorage } from '../helpers/dialects.js'

const records = (n: number, base: number): TimedRecord[] => Array.from({ length: n }, (_, i) => ({ ts: base + i, values: { temp: i, ok: true } }))

describe.each(DIALECTS)('telemetry group commit on %s', (dialect) => {
  let storage: Awaited<ReturnType<typeof openTestStorage>>
  let store: TelemetryStore
  beforeAll(async () => {
    storage = await openTestStorage(dialect)
    store = new TelemetryStore(storage.db)
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
    const small = new TelemetryStore(storage.db, 100)
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
