import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DIALECTS } from '../helpers/dialects.js'
import { startTestApp, type TestApp } from '../helpers/test-app.js'

describe('JSON hygiene and error bodies', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp(DIALECTS[0]!)
  })
  afterAll(() => t.close())

  const post = (payload: string, contentType = 'application/json') =>
    t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload, headers: { 'content-type': contentType } })

  it('answers 400 for an empty JSON body', async () => {
    const res = await post('')
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ success: false, error: 'bad_request' })
  })

  it('answers 400 for malformed JSON, never 500', async () => {
    for (const body of ['{', '{"username":}', 'nul', '"\\x"']) {
      const res = await post(body)
      expect(res.statusCode, body).toBe(400)
      expect(res.json().error).toBe('bad_request')
    }
  })

  it('answers 415 for a body that is not application/json', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
      const res = await post('username=a&password=b', type)
      expect(res.statusCode, type).toBe(415)
      expect(res.json()).toMatchObject({ success: false, error: 'unsupported_media_type' })
    }
  })

  it('accepts application/json with a charset', async () => {
    const res = await post(JSON.stringify({ username: 'admin', password: 'admin' }), 'application/json; charset=utf-8')
    expect(res.statusCode).toBe(200)
  })

  it('answers 400 for nesting deeper than 64 levels, accepts 64', async () => {
    const nest = (n: number) => '['.repeat(n) + ']'.repeat(n)
    const deep = await post(`{"username":"a","password":"b","x":${nest(64)}}`)
    expect(deep.statusCode).toBe(400)
    expect(deep.json().message).toMatch(/nested/)
    const ok = await post(`{"username":"admin","password":"admin","x":${nest(62)}}`)
    expect(ok.statusCode).toBe(200)
  })

  it('answers 400 for a __proto__ key anywhere', async () => {
    const res = await post('{"username":"a","password":"b","x":{"y":[{"__proto__":{"admin":true}}]}}')
    expect(res.statusCode).toBe(400)
    expect(res.json().message).toMatch(/__proto__/)
  })

  it('answers 400 for U+0000 in any string', async () => {
    const res = await post('{"username":"ad\\u0000min","password":"b"}')
    expect(res.statusCode).toBe(400)
  })

  it('answers 413 payload_too_large above 1 MiB', async () => {
    const res = await post(JSON.stringify({ username: 'a', password: 'b', pad: 'x'.repeat(1024 * 1024) }))
    expect(res.statusCode).toBe(413)
    expect(res.json()).toMatchObject({ success: false, error: 'payload_too_large' })
  })

  it('puts x-request-id on every response, errors included', async () => {
    const ok = await t.app.inject({ method: 'GET', url: '/healthz' })
    const missing = await t.app.inject({ method: 'GET', url: '/nope' })
    expect(ok.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/)
    expect(missing.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/)
    expect(missing.statusCode).toBe(404)
    expect(missing.json()).toMatchObject({ success: false, error: 'not_found' })
  })

  it('gives every request its own id', async () => {
    const ids = new Set<string>()
    for (let i = 0; i < 200; i++) ids.add(String((await t.app.inject({ method: 'GET', url: '/healthz' })).headers['x-request-id']))
    expect(ids.size).toBe(200)
  })

  it('answers 400 for a badly percent-encoded URL', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/%E0%A4%A', payload: {} })
    expect([400, 404]).toContain(res.statusCode)
    expect(res.json().success).toBe(false)
  })
})
