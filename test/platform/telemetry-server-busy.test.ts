import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MAX_QUEUED_POINTS } from '../../src/platform/telemetry/telemetry-store.js'
import { DIALECTS } from '../helpers/dialects.js'
import { startPlatformApp, type PlatformApp } from './platform-kit.js'

const KEYS = 10
const RECORDS = 1000
/** Batches of 10,000 points (about 250 KiB of JSON): enough of them overflow the queue. */
const batch = (base: number) => ({
  records: Array.from({ length: RECORDS }, (_, i) => ({ ts: base + i, values: Object.fromEntries(Array.from({ length: KEYS }, (_, k) => [`k${k}`, i])) })),
})

// A row lock held from outside stalls every writer on PostgreSQL; SQLite has no such lock to hold.
describe.skipIf(!DIALECTS.includes('postgres'))('telemetry when the database falls behind (postgres)', () => {
  let t: PlatformApp
  beforeAll(async () => {
    t = await startPlatformApp('postgres')
  })
  afterAll(() => t.close())

  it('answers 503 server_busy with Retry-After once the queue is full, storing none of those batches', async () => {
    await t.addDevice('busy-1')
    const now = Date.now() - 60_000
    expect((await t.device('POST', '/v1/device/busy-1/telemetry/batch', batch(now - 100_000))).statusCode).toBe(200)
    const target = t.database.target as { url: string; schema: string }
    const holder = new pg.Client({ connectionString: target.url, options: `-c search_path=${target.schema}` })
    await holder.connect()
    await holder.query('begin')
    await holder.query(`select * from platform_telemetry_series where device_id = 'busy-1' for update`)
    const sent = Math.ceil(MAX_QUEUED_POINTS / (RECORDS * KEYS)) + 12
    const answers = Array.from({ length: sent }, (_, i) => t.device('POST', '/v1/device/busy-1/telemetry/batch', batch(now + i * RECORDS)))
    // The first refusal arrives while the writers are still stalled.
    const first = await Promise.race(answers.map((a) => a.then((res) => (res.statusCode === 503 ? res : new Promise<never>(() => undefined)))))
    expect(first.json()).toMatchObject({ success: false, error: 'server_busy' })
    expect(Number(first.headers['retry-after'])).toBeGreaterThan(0)
    await holder.query('commit')
    await holder.end()
    const statuses = (await Promise.all(answers)).map((r) => r.statusCode)
    expect(statuses.filter((s) => s !== 200 && s !== 503)).toEqual([])
    const accepted = statuses.filter((s) => s === 200).length
    const stored = await t.storage.db.selectFrom('platform_telemetry').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()
    expect(Number(stored.n)).toBe((accepted + 1) * RECORDS * KEYS)
  }, 120_000)
})
