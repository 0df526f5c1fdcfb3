import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DIALECTS } from '../helpers/dialects.js'
import { loginAs, startTestApp, type TestApp } from '../helpers/test-app.js'

/** The 5xx answers the contract allows (a device or service elsewhere is missing or slow). */
const EXPECTED_5XX = new Set(['device_unavailable', 'bad_device_response', 'upstream_unavailable', 'not_configured', 'device_timeout', 'server_busy', 'service_unavailable'])

const HOSTILE_BODIES: { name: string; payload: string; type?: string }[] = [
  { name: 'empty object', payload: '{}' },
  { name: 'array', payload: '[1,2,3]' },
  { name: 'string', payload: '"hello"' },
  { name: 'null', payload: 'null' },
  { name: 'number', payload: '42' },
  { name: 'wrong types', payload: JSON.stringify({ device_id: 5, id: {}, code: [], action: 1, params: 'x', records: 'x', values: [], config: 1, acks: {}, level: 9, message: {}, x: '1', state: 'on', name: 1, items: {}, key: 1, command: 2, filename: 3, expression: {}, username: 1, password: 2 }) },
  { name: 'hostile ids', payload: JSON.stringify({ device_id: '../../etc/passwd', model: 'm', id: '..', code: '000000', user_id: 'x'.repeat(300) }) },
  { name: 'deep nesting', payload: '['.repeat(100) + ']'.repeat(100) },
  { name: 'proto key', payload: '{"__proto__":{"admin":true}}' },
  { name: 'nul in string', payload: '{"message":"a\\u0000b","device_id":"a\\u0000"}' },
  { name: 'malformed', payload: '{"a":' },
  { name: 'text body', payload: 'hello', type: 'text/plain' },
  { name: 'form body', payload: 'a=1', type: 'application/x-www-form-urlencoded' },
]

const HOSTILE_QUERIES = ['?limit=abc', '?limit=-1', '?limit=99999', '?after=%00', '?before=zz', '?level=nope&source=x&status=y', '?keys=' + 'k,'.repeat(200), '?from=x&to=y', '?device_id=../x&version=abc&hw_version=q']

describe.each(DIALECTS)('no endpoint answers 500 to hostile input on %s', (dialect) => {
  let t: TestApp
  let admin: string
  let routes: { method: string; url: string }[]

  beforeAll(async () => {
    t = await startTestApp(dialect, { DEVICE_REQUEST_TIMEOUT_MS: '200' })
    admin = await loginAs(t.app, 'admin', 'admin')
    await t.app.inject({ method: 'POST', url: '/api/admin/device/add', headers: { 'x-console-token': 'test-console-token' }, payload: { device_id: 'dev-1', model: 'm' } })
    const doc = (await t.app.inject('/openapi.json')).json() as { paths: Record<string, Record<string, unknown>> }
    // The event stream stays open by design: an injected request to it would never finish.
    routes = Object.entries(doc.paths).filter(([path]) => path !== '/api/v1/events').flatMap(([path, ops]) =>
      Object.keys(ops).map((method) => ({
        method: method.toUpperCase(),
        url: path.replace(/\{cam\}/g, 'up').replace(/\{[a-z_]+\}/g, (m) => (m === '{device_id}' ? 'dev-1' : 'x1')),
      })),
    )
  })
  afterAll(() => t.close())

  const check = async (method: string, url: string, payload?: string, type = 'application/json') => {
    const res = await t.app.inject({
      method: method as 'POST',
      url,
      headers: { authorization: admin, 'x-console-token': 'test-console-token', ...(payload !== undefined ? { 'content-type': type } : {}) },
      ...(payload !== undefined ? { payload } : {}),
    })
    const body = res.body ? (JSON.parse(res.body.startsWith('{') ? res.body : '{}') as { error?: string; success?: boolean }) : {}
    const where = `${method} ${url} ${payload?.slice(0, 40) ?? ''} → ${res.statusCode} ${res.body.slice(0, 200)}`
    expect(res.statusCode, where).not.toBe(500)
    if (res.statusCode >= 500) expect(EXPECTED_5XX.has(body.error ?? ''), where).toBe(true)
    if (res.statusCode >= 400 && res.headers['content-type']?.toString().includes('json')) expect(body.success, where).toBe(false)
  }

  it('lists the whole API', () => {
    expect(routes.length).toBeGreaterThan(90)
  })

  it('answers hostile bodies on every write endpoint with 4xx (or a documented 5xx), never 500', async () => {
    for (const { method, url } of routes.filter((r) => r.method !== 'GET' && r.method !== 'DELETE')) {
      for (const body of HOSTILE_BODIES) await check(method, url, body.payload, body.type)
    }
  })

  it('answers hostile query strings and ids on every endpoint without a 500', async () => {
    for (const { method, url } of routes) {
      for (const q of HOSTILE_QUERIES) await check(method, url + q, method === 'GET' || method === 'DELETE' ? undefined : '{}')
      const hostileId = url.replace('dev-1', '%2e%2e%2Fetc').replace('x1', 'a'.repeat(65))
      await check(method, hostileId, method === 'GET' || method === 'DELETE' ? undefined : '{}')
    }
  })
})
