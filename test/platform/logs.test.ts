import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DIALECTS } from '../helpers/dialects.js'
import { startPlatformApp, type PlatformApp } from './platform-kit.js'

const TEXT = { 'content-type': 'text/plain' }
const DAY = 86_400_000

describe.each(DIALECTS)('platform logs on %s', (dialect) => {
  let t: PlatformApp
  beforeAll(async () => {
    t = await startPlatformApp(dialect)
  })
  afterAll(() => t.close())

  const deviceLogs = async (id: string) =>
    (await t.admin('GET', `/api/admin/logs?source=device&device_id=${id}&limit=1000`)).json().logs as {
      id: number
      source: string
      device_id: string
      level: string
      tag: string | null
      message: string
      ts: number
    }[]
  const postText = (id: string, payload: string, headers: Record<string, string> = TEXT) =>
    t.app.inject({ method: 'POST', url: `/v1/device/${id}/logs/batch`, headers, payload })

  it('stores one entry with its level, tag, message and ts', async () => {
    await t.addDevice('lg-1')
    const ts = Date.now() - 1000
    const res = await t.device('POST', '/v1/device/lg-1/logs', { level: 'warn', message: 'low battery', tag: 'power', ts })
    expect(res.json()).toEqual({ success: true, accepted: 1 })
    expect(await deviceLogs('lg-1')).toEqual([{ id: expect.any(Number), source: 'device', device_id: 'lg-1', level: 'warn', tag: 'power', message: 'low battery', ts }])
  })

  it('defaults the level to info and the time to the time of receipt', async () => {
    await t.addDevice('lg-2')
    const before = Date.now()
    await t.device('POST', '/v1/device/lg-2/logs', { message: 'hello' })
    const [entry] = await deviceLogs('lg-2')
    expect(entry).toMatchObject({ level: 'info', tag: null, message: 'hello' })
    expect(entry!.ts).toBeGreaterThanOrEqual(before)
  })

  it.each([
    [{}],
    [{ message: 5 }],
    [{ message: 'm'.repeat(4097) }],
    [{ message: 'x', level: 'fatal' }],
    [{ message: 'x', level: 'ERROR' }],
    [{ message: 'x', tag: 't'.repeat(65) }],
    [{ message: 'x', ts: Date.now() - 31 * DAY }],
    [{ message: 'x', ts: 'now' }],
    [{ message: 'x', extra: 1 }],
  ])('rejects the entry %j with 400', async (body) => {
    await t.addDevice('lg-bad').catch(() => undefined)
    expect((await t.device('POST', '/v1/device/lg-bad/logs', body)).statusCode).toBe(400)
  })

  it('accepts a JSON array batch, all or nothing, naming the bad entry', async () => {
    await t.addDevice('lg-batch')
    const ok = await t.device('POST', '/v1/device/lg-batch/logs/batch', [{ message: 'a' }, { level: 'error', message: 'b', tag: 'x' }])
    expect(ok.json()).toEqual({ success: true, accepted: 2 })
    const bad = await t.device('POST', '/v1/device/lg-batch/logs/batch', [{ message: 'c' }, { message: 'd', level: 'loud' }])
    expect(bad.statusCode).toBe(400)
    expect(bad.json()).toMatchObject({ error: 'bad_request', index: 1 })
    expect(bad.json().message).toMatch(/entry 1/)
    const badTs = await t.device('POST', '/v1/device/lg-batch/logs/batch', [{ message: 'c' }, { message: 'd' }, { message: 'e', ts: Date.now() + 2 * DAY }])
    expect(badTs.json()).toMatchObject({ error: 'bad_request', index: 2 })
    expect((await deviceLogs('lg-batch')).map((l) => l.message)).toEqual(['b', 'a'])
  })

  it('rejects a JSON batch of more than 1000 entries or that is not an array', async () => {
    await t.addDevice('lg-many')
    expect((await t.device('POST', '/v1/device/lg-many/logs/batch', Array.from({ length: 1001 }, () => ({ message: 'x' })))).statusCode).toBe(400)
    expect((await t.device('POST', '/v1/device/lg-many/logs/batch', { entries: [] })).statusCode).toBe(400)
    expect((await t.device('POST', '/v1/device/lg-many/logs/batch', Array.from({ length: 1000 }, () => ({ message: 'x' })))).json().accepted).toBe(1000)
  })

  it('rejects a text/plain batch of more than 1000 lines, storing nothing, and accepts 1000', async () => {
    await t.addDevice('lg-many-text')
    const tooMany = await postText('lg-many-text', '[INFO] line\n'.repeat(1001))
    expect(tooMany.statusCode, tooMany.body).toBe(400)
    expect(tooMany.json()).toMatchObject({ success: false, error: 'bad_request' })
    expect(await deviceLogs('lg-many-text')).toEqual([])
    expect((await postText('lg-many-text', '[INFO] line\n'.repeat(1000))).json()).toEqual({ success: true, accepted: 1000 })
  })

  it('accepts text/plain lines in both forms, with a charset too', async () => {
    await t.addDevice('lg-text')
    const res = await postText('lg-text', '[ERROR] disk full\nW (1234) wifi: weak signal\n\n[info] ok\n', { 'content-type': 'text/plain; charset=utf-8' })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json()).toEqual({ success: true, accepted: 3 })
    const logs = (await deviceLogs('lg-text')).reverse()
    expect(logs.map(({ level, tag, message }) => ({ level, tag, message }))).toEqual([
      { level: 'error', tag: null, message: 'disk full' },
      { level: 'warn', tag: 'wifi', message: 'weak signal' },
      { level: 'info', tag: null, message: 'ok' },
    ])
  })

  it('rejects a text batch with one bad line, naming the line, storing nothing', async () => {
    await t.addDevice('lg-text-bad')
    const res = await postText('lg-text-bad', '[INFO] fine\nthis is not a log line\n')
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ error: 'bad_request', line: 2 })
    expect(await deviceLogs('lg-text-bad')).toEqual([])
  })

  it('accepts a text batch of 1 MiB and answers 413 above it', async () => {
    await t.addDevice('lg-text-big')
    const line = `[INFO] ${'x'.repeat(1041)}\n` // 1049 bytes; 1000 lines in all
    const fits = line.repeat(999) + '[INFO] ' + 'y'.repeat(1024 * 1024 - 999 * 1049 - 7)
    expect(Buffer.byteLength(fits)).toBe(1024 * 1024)
    expect((await postText('lg-text-big', fits)).statusCode).toBe(200)
    const tooBig = await postText('lg-text-big', fits + 'z')
    expect(tooBig.statusCode).toBe(413)
    expect(tooBig.json().error).toBe('payload_too_large')
  })

  it('keeps answering 415 to text/plain everywhere else', async () => {
    await t.addDevice('lg-415')
    for (const url of ['/v1/device/lg-415/logs', '/v1/device/lg-415/telemetry', '/v1/device/lg-415/config', '/api/admin/device/add', '/api/v1/auth/login']) {
      const res = await t.app.inject({ method: 'POST', url, headers: { ...TEXT, 'x-console-token': 'test-console-token' }, payload: '[INFO] hi' })
      expect(res.statusCode, url).toBe(415)
      expect(res.json().error).toBe('unsupported_media_type')
    }
  })

  it('answers 415 to another content type on the batch route', async () => {
    await t.addDevice('lg-xml')
    expect((await postText('lg-xml', '<log/>', { 'content-type': 'application/xml' })).statusCode).toBe(415)
  })

  describe('admin list and clear', () => {
    beforeAll(async () => {
      await t.addDevice('lg-a')
      await t.addDevice('lg-b')
      await t.device('POST', '/v1/device/lg-a/logs/batch', [{ level: 'info', message: 'a1' }, { level: 'error', message: 'a2' }, { level: 'info', message: 'a3' }])
      await t.device('POST', '/v1/device/lg-b/logs/batch', [{ level: 'error', message: 'b1' }])
    })

    it('lists newest first with id, source, device_id, level, tag, message and ts', async () => {
      const logs = (await t.admin('GET', '/api/admin/logs?device_id=lg-a&source=device')).json().logs
      expect(logs.map((l: { message: string }) => l.message)).toEqual(['a3', 'a2', 'a1'])
      expect(Object.keys(logs[0]).sort()).toEqual(['device_id', 'id', 'level', 'message', 'source', 'tag', 'ts'])
    })

    it('filters by level and source, and pages with before / next_before', async () => {
      const errors = (await t.admin('GET', '/api/admin/logs?source=device&level=error')).json().logs
      expect(errors.every((l: { level: string }) => l.level === 'error')).toBe(true)
      expect(errors.map((l: { message: string }) => l.message)).toEqual(expect.arrayContaining(['a2', 'b1']))
      const page1 = (await t.admin('GET', '/api/admin/logs?device_id=lg-a&source=device&limit=2')).json()
      expect(page1.logs.map((l: { message: string }) => l.message)).toEqual(['a3', 'a2'])
      const page2 = (await t.admin('GET', `/api/admin/logs?device_id=lg-a&source=device&limit=2&before=${page1.next_before}`)).json()
      expect(page2.logs.map((l: { message: string }) => l.message)).toEqual(['a1'])
      expect(page2).not.toHaveProperty('next_before')
      const operations = (await t.admin('GET', '/api/admin/logs?source=operation')).json().logs
      expect(operations.length).toBeGreaterThan(0)
      expect(operations.every((l: { source: string }) => l.source === 'operation')).toBe(true)
    })

    it.each(['limit=0', 'limit=1001', 'limit=ten', 'level=fatal', 'source=system', 'before=x', 'before=-5', 'device_id=..'])(
      'rejects ?%s with 400',
      async (query) => {
        const res = await t.admin('GET', `/api/admin/logs?${query}`)
        expect(res.statusCode).toBe(400)
        expect(res.json().error).toBe('bad_request')
      },
    )

    it('clears one device’s logs and records the clearing as an operation', async () => {
      const res = await t.admin('POST', '/api/admin/logs/clear', { device_id: 'lg-b', source: 'device' })
      expect(res.json()).toEqual({ success: true, deleted: 1 })
      expect(await deviceLogs('lg-b')).toEqual([])
      expect((await deviceLogs('lg-a')).length).toBe(3)
      const [latest] = (await t.admin('GET', '/api/admin/logs?source=operation&limit=1')).json().logs
      expect(latest).toMatchObject({ source: 'operation', tag: 'logs.clear', device_id: 'lg-b' })
    })

    it('rejects a clear body with an unknown source with 400', async () => {
      expect((await t.admin('POST', '/api/admin/logs/clear', { source: 'everything' })).statusCode).toBe(400)
    })

    it('clears every log with no body', async () => {
      const res = await t.app.inject({ method: 'POST', url: '/api/admin/logs/clear', headers: { 'x-console-token': 'test-console-token' } })
      expect(res.statusCode).toBe(200)
      expect(res.json().deleted).toBeGreaterThan(3)
      const left = (await t.admin('GET', '/api/admin/logs')).json().logs
      expect(left.map((l: { tag: string }) => l.tag)).toEqual(['logs.clear'])
    })
  })
})
