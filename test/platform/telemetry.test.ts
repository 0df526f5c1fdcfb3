import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DIALECTS } from '../helpers/dialects.js'
import { startPlatformApp, type PlatformApp } from './platform-kit.js'

const DAY = 86_400_000

describe.each(DIALECTS)('platform telemetry on %s', (dialect) => {
  let t: PlatformApp
  beforeAll(async () => {
    t = await startPlatformApp(dialect)
    await t.addDevice('tm-1')
  })
  afterAll(() => t.close())

  const pointCount = async (deviceId: string) => {
    const row = await t.storage.db
      .selectFrom('platform_telemetry')
      .innerJoin('platform_telemetry_series', 'platform_telemetry_series.series_id', 'platform_telemetry.series_id')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('device_id', '=', deviceId)
      .executeTakeFirstOrThrow()
    return Number(row.n)
  }
  const series = async (deviceId: string, query: string) => {
    const res = await t.admin('GET', `/api/admin/device/${deviceId}/telemetry?${query}`)
    expect(res.statusCode, res.body).toBe(200)
    return res.json().series as Record<string, [number, unknown][]>
  }

  it('accepts one record with numbers, booleans and strings and stores it at the given ts', async () => {
    const ts = Date.now() - 5000
    const res = await t.device('POST', '/v1/device/tm-1/telemetry', { ts, values: { temp: 21.5, on: true, mode: 'eco' } })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ success: true, accepted: 1 })
    expect(await series('tm-1', 'keys=temp,on,mode')).toEqual({ temp: [[ts, 21.5]], on: [[ts, true]], mode: [[ts, 'eco']] })
  })

  it('stores strings with quotes, backslashes, braces, commas and non-ASCII characters as sent', async () => {
    await t.addDevice('tm-text')
    const ts = Date.now() - 5000
    const values = { quoted: 'say "hi"', slash: 'C:\\dir\\', braces: '{1,2},{NULL}', word: 'NULL', empty: '', unicode: 'größe 温度 😀', ws: ' \t\n ' }
    const res = await t.device('POST', '/v1/device/tm-text/telemetry/batch', [{ ts, values }, { ts: ts + 1, values: { quoted: '"' } }])
    expect(res.statusCode, res.body).toBe(200)
    const stored = await series('tm-text', `keys=${Object.keys(values).join(',')}`)
    expect(stored).toEqual({ ...Object.fromEntries(Object.entries(values).map(([k, v]) => [k, [[ts, v]]])), quoted: [[ts, values.quoted], [ts + 1, '"']] })
  })

  it('stamps a record without ts with the time of receipt', async () => {
    await t.addDevice('tm-now')
    const before = Date.now()
    await t.device('POST', '/v1/device/tm-now/telemetry', { values: { v: 1 } })
    const [[ts]] = (await series('tm-now', 'keys=v')).v!
    expect(ts).toBeGreaterThanOrEqual(before)
    expect(ts).toBeLessThanOrEqual(Date.now())
  })

  it('accepts a batch as {records} and as a bare array, answering the record count', async () => {
    await t.addDevice('tm-batch')
    const now = Date.now()
    const a = await t.device('POST', '/v1/device/tm-batch/telemetry/batch', { records: [{ ts: now - 3, values: { x: 1, y: 2 } }, { ts: now - 2, values: { x: 3 } }] })
    expect(a.json()).toEqual({ success: true, accepted: 2 })
    const b = await t.device('POST', '/v1/device/tm-batch/telemetry/batch', [{ ts: now - 1, values: { x: 5 } }])
    expect(b.json()).toEqual({ success: true, accepted: 1 })
    expect(await series('tm-batch', 'keys=x,y')).toEqual({ x: [[now - 3, 1], [now - 2, 3], [now - 1, 5]], y: [[now - 3, 2]] })
  })

  it('accepts a batch of exactly 1000 records', async () => {
    await t.addDevice('tm-1000')
    const now = Date.now()
    const records = Array.from({ length: 1000 }, (_, i) => ({ ts: now - i, values: { v: i } }))
    const res = await t.device('POST', '/v1/device/tm-1000/telemetry/batch', { records })
    expect(res.json()).toEqual({ success: true, accepted: 1000 })
    expect(await pointCount('tm-1000')).toBe(1000)
  })

  it('stores a batch of 1000 records × 64 keys, each a new series', async () => {
    await t.addDevice('tm-wide')
    const now = Date.now()
    const records = Array.from({ length: 1000 }, (_, i) => ({ ts: now - i, values: Object.fromEntries(Array.from({ length: 64 }, (_, k) => [`r${i}.k${k}`, k])) }))
    const res = await t.device('POST', '/v1/device/tm-wide/telemetry/batch', records)
    expect(res.json()).toEqual({ success: true, accepted: 1000 })
    expect(await pointCount('tm-wide')).toBe(64_000)
    const latest = (await t.admin('GET', '/api/admin/device/tm-wide/detail')).json().latest_telemetry
    expect(Object.keys(latest)).toHaveLength(64_000)
    expect(latest['r999.k63']).toEqual({ ts: now - 999, value: 63 })
  })

  const record = (values: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ values, ...extra })
  const manyKeys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]))
  const invalidRecords: [string, unknown][] = [
    ['a key with a space', record({ 'bad key': 1 })],
    ['an empty key', record({ '': 1 })],
    ['a key of 65 characters', record({ ['k'.repeat(65)]: 1 })],
    ['65 keys', record(manyKeys(65))],
    ['no values', record({})],
    ['a string of 257 characters', record({ s: 's'.repeat(257) })],
    ['a null value', record({ v: null })],
    ['an object value', record({ v: { nested: 1 } })],
    ['an array value', record({ v: [1] })],
    ['ts more than 30 days ago', record({ v: 1 }, { ts: Date.now() - 31 * DAY })],
    ['ts more than 1 day ahead', record({ v: 1 }, { ts: Date.now() + 2 * DAY })],
    ['a fractional ts', record({ v: 1 }, { ts: Date.now() + 0.5 })],
    ['ts as a string', record({ v: 1 }, { ts: String(Date.now()) })],
    ['an unknown property', record({ v: 1 }, { value: 1 })],
    ['values missing', { ts: Date.now() }],
  ]

  it.each(invalidRecords)('rejects a single record with %s', async (_what, body) => {
    const res = await t.device('POST', '/v1/device/tm-1/telemetry', body as object)
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ success: false, error: 'bad_request' })
  })

  it.each(invalidRecords)('rejects a whole batch whose record 2 has %s, naming index 2 and storing nothing', async (_what, bad) => {
    await t.addDevice(`tm-bad-${invalidRecords.findIndex(([w]) => w === _what)}`)
    const deviceId = `tm-bad-${invalidRecords.findIndex(([w]) => w === _what)}`
    const good = { values: { ok: 1 } }
    const res = await t.device('POST', `/v1/device/${deviceId}/telemetry/batch`, [good, good, bad, good] as object)
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ success: false, error: 'bad_request', index: 2 })
    expect(res.json().message).toMatch(/record 2/)
    expect(await pointCount(deviceId)).toBe(0)
  })

  it.each([
    ['1001 records', { records: Array.from({ length: 1001 }, () => ({ values: { v: 1 } })) }],
    ['records that is not an array', { records: { values: { v: 1 } } }],
    ['an unknown top-level property', { records: [], device: 'x' }],
    ['a JSON string body', 'records'],
    ['a JSON null body', null],
  ])('rejects a batch with %s', async (_what, body) => {
    const headers = { 'content-type': 'application/json' }
    const res = await t.app.inject({ method: 'POST', url: '/v1/device/tm-1/telemetry/batch', headers, payload: JSON.stringify(body) })
    expect(res.statusCode).toBe(400)
    expect(res.json().error).toBe('bad_request')
  })

  it('accepts ts at the edges of the window', async () => {
    await t.addDevice('tm-edge')
    const now = Date.now()
    const res = await t.device('POST', '/v1/device/tm-edge/telemetry/batch', [
      { ts: now - 30 * DAY + 60_000, values: { v: 1 } },
      { ts: now + DAY - 60_000, values: { v: 2 } },
    ])
    expect(res.json()).toEqual({ success: true, accepted: 2 })
  })

  it('answers 415 to telemetry sent as text/plain', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/device/tm-1/telemetry', headers: { 'content-type': 'text/plain' }, payload: '{"values":{"a":1}}' })
    expect(res.statusCode).toBe(415)
    expect(res.json().error).toBe('unsupported_media_type')
  })

  describe('admin query', () => {
    const base = Date.now() - 10 * 60_000
    beforeAll(async () => {
      await t.addDevice('tm-q')
      const records = Array.from({ length: 50 }, (_, i) => ({ ts: base + i * 1000, values: { a: i, b: i * 10 } }))
      await t.device('POST', '/v1/device/tm-q/telemetry/batch', records)
    })

    it('returns the newest `limit` points per key within from..to, oldest first', async () => {
      const s = await series('tm-q', `keys=a,b&from=${base + 10_000}&to=${base + 20_000}&limit=3`)
      expect(s.a).toEqual([[base + 18_000, 18], [base + 19_000, 19], [base + 20_000, 20]])
      expect(s.b).toEqual([[base + 18_000, 180], [base + 19_000, 190], [base + 20_000, 200]])
    })

    it('defaults to every key of the device and 100 points', async () => {
      const s = await series('tm-q', '')
      expect(Object.keys(s).sort()).toEqual(['a', 'b'])
      expect(s.a).toHaveLength(50)
    })

    it('answers an empty series for a key the device never sent', async () => {
      expect(await series('tm-q', 'keys=a,zzz&limit=1')).toEqual({ a: [[base + 49_000, 49]], zzz: [] })
    })

    it.each([
      ['limit=0'],
      ['limit=1001'],
      ['limit=abc'],
      ['from=abc'],
      ['to=-1'],
      ['from=20&to=10'],
      ['keys=bad key'],
      ['keys=a,,b'],
      [`keys=${Array.from({ length: 65 }, (_, i) => `k${i}`).join(',')}`],
    ])('rejects %s with 400', async (query) => {
      const res = await t.admin('GET', `/api/admin/device/tm-q/telemetry?${query}`)
      expect(res.statusCode).toBe(400)
    })

    it('answers 404 for an unknown device', async () => {
      expect((await t.admin('GET', '/api/admin/device/nobody/telemetry')).statusCode).toBe(404)
    })

    it('shows the newest value of every key in the device detail', async () => {
      const detail = (await t.admin('GET', '/api/admin/device/tm-q/detail')).json()
      expect(detail.latest_telemetry).toEqual({ a: { ts: base + 49_000, value: 49 }, b: { ts: base + 49_000, value: 490 } })
    })

    it('keeps the newest value when an older record arrives later', async () => {
      await t.device('POST', '/v1/device/tm-q/telemetry', { ts: base - 60_000, values: { a: -1 } })
      const detail = (await t.admin('GET', '/api/admin/device/tm-q/detail')).json()
      expect(detail.latest_telemetry.a).toEqual({ ts: base + 49_000, value: 49 })
    })
  })

  it('keeps every record of concurrent batches of one device', async () => {
    await t.addDevice('tm-conc')
    const now = Date.now()
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, w) =>
        t.device('POST', '/v1/device/tm-conc/telemetry/batch', Array.from({ length: 25 }, (_, i) => ({ ts: now - w * 100 - i, values: { [`k${(w + i) % 3}`]: i } }))),
      ),
    )
    expect(answers.map((a) => a.statusCode)).toEqual(Array(8).fill(200))
    expect(await pointCount('tm-conc')).toBe(200)
  })
})
