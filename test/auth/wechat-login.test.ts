import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DIALECTS } from '../helpers/dialects.js'
import { startTestApp, type TestApp } from '../helpers/test-app.js'

/** A local stand-in for the identity service's jscode2session, keyed by the code it receives. */
function startFakeWechat(): Promise<{ server: Server; url: string; seen: URLSearchParams[] }> {
  const seen: URLSearchParams[] = []
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x')
    if (url.pathname !== '/sns/jscode2session') return void res.writeHead(404).end()
    seen.push(url.searchParams)
    const code = url.searchParams.get('js_code')
    const json = (body: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body))
    if (code?.startsWith('good-')) return json({ openid: `oid${code.slice(5)}`, session_key: 'SECRET-SESSION-KEY' })
    if (code === 'used') return json({ errcode: 40163, errmsg: 'code been used' })
    if (code === 'invalid') return json({ errcode: 40029, errmsg: 'invalid code' })
    if (code === 'busy') return json({ errcode: -1, errmsg: 'system busy' })
    if (code === 'html') return void res.writeHead(500, { 'content-type': 'text/html' }).end('<h1>oops</h1>')
    if (code === 'slow') return // never answers: the gateway's time-out must fire
    json({ errcode: 40029 })
  })
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen })),
  )
}

describe.each(DIALECTS)('mini-program login on %s', (dialect) => {
  let fake: Awaited<ReturnType<typeof startFakeWechat>>
  let t: TestApp
  const wechatLogin = (payload: unknown) => t.app.inject({ method: 'POST', url: '/api/v1/auth/wechat-login', payload: payload as object })

  beforeAll(async () => {
    fake = await startFakeWechat()
    t = await startTestApp(dialect, { WECHAT_APPID: 'wx-app', WECHAT_SECRET: 'wx-secret', WECHAT_API_BASE: fake.url }, { wechatTimeoutMs: 300 })
  })
  afterAll(async () => {
    await t.close()
    fake.server.closeAllConnections()
    await new Promise((r) => fake.server.close(r))
  })

  it('exchanges a valid code and returns a wechat user with a token, never the session key', async () => {
    const res = await wechatLogin({ code: 'good-1', profile: { nickName: 'Mei', avatarUrl: 'https://img/a.png' } })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({
      success: true,
      expires_in: 259200,
      user: { id: 'wechat_oid1', username: 'wechat_oid1', display_name: 'Mei', role: 'wechat', avatar_url: 'https://img/a.png', provider: 'wechat' },
    })
    expect(res.body).not.toContain('SECRET-SESSION-KEY')
    const q = fake.seen.at(-1)!
    expect(Object.fromEntries(q)).toEqual({ appid: 'wx-app', secret: 'wx-secret', js_code: 'good-1', grant_type: 'authorization_code' })
    const refreshed = await t.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', headers: { authorization: `Bearer ${res.json().token}` } })
    expect(refreshed.statusCode).toBe(200)
    expect(refreshed.json().user.role).toBe('wechat')
  })

  it('updates the stored profile on each login', async () => {
    await wechatLogin({ code: 'good-2', profile: { nickName: 'Old', avatarUrl: 'a' } })
    const res = await wechatLogin({ code: 'good-2', profile: { nickName: 'New', avatarUrl: 'b' } })
    expect(res.json().user).toMatchObject({ id: 'wechat_oid2', display_name: 'New', avatar_url: 'b' })
    const rows = await t.storage.db.selectFrom('users').selectAll().where('id', '=', 'wechat_oid2').execute()
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({ display_name: 'New', avatar_url: 'b', role: 'wechat' })
  })

  it.each([
    ['invalid', 401, 'unauthorized'],
    ['used', 401, 'unauthorized'],
    ['busy', 502, 'upstream_unavailable'],
    ['html', 502, 'upstream_unavailable'],
    ['slow', 502, 'upstream_unavailable'],
  ])('maps the service answer for code %s to %i', async (code, status, error) => {
    const res = await wechatLogin({ code })
    expect(res.statusCode).toBe(status)
    expect(res.json()).toMatchObject({ success: false, error })
  })

  it('answers 400 when the code is missing or not a string', async () => {
    expect((await wechatLogin({})).statusCode).toBe(400)
    expect((await wechatLogin({ code: 12 })).statusCode).toBe(400)
    expect((await wechatLogin({ code: 'good-3', profile: 'x' })).statusCode).toBe(400)
  })

  it('answers 502 when the service cannot be reached at all', async () => {
    const down = await startTestApp(dialect, { WECHAT_APPID: 'a', WECHAT_SECRET: 's', WECHAT_API_BASE: 'http://127.0.0.1:1' })
    try {
      const res = await down.app.inject({ method: 'POST', url: '/api/v1/auth/wechat-login', payload: { code: 'good-1' } })
      expect(res.statusCode).toBe(502)
      expect(res.json().error).toBe('upstream_unavailable')
    } finally {
      await down.close()
    }
  })
})

describe('mini-program login without credentials configured', () => {
  it('answers 503 not_configured', async () => {
    const t = await startTestApp(DIALECTS[0]!)
    try {
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/wechat-login', payload: { code: 'x' } })
      expect(res.statusCode).toBe(503)
      expect(res.json()).toMatchObject({ success: false, error: 'not_configured' })
    } finally {
      await t.close()
    }
  })
})
