import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { DIALECTS } from '../helpers/dialects.js'
import { loginAs } from '../helpers/test-app.js'
import { freezeClock } from './fake-clock.js'
import { CONSOLE, startPlatformApp, type PlatformApp } from './platform-kit.js'

let address = 0
/** Each test its own client address: the verify rate limit is per address. */
const nextAddress = () => `10.77.0.${++address}`

describe.each(DIALECTS)('platform binding on %s', (dialect) => {
  let t: PlatformApp
  let alice: string
  let root: string
  beforeAll(async () => {
    t = await startPlatformApp(dialect)
    alice = await loginAs(t.app, 'alice')
    root = await loginAs(t.app, 'root')
  })
  afterAll(() => t.close())

  const code = async (id: string) => {
    const res = await t.device('GET', `/v1/device/${id}/bind/code`)
    expect(res.statusCode).toBe(200)
    return res.json() as { success: boolean; code: string; expires_at: number }
  }
  const status = async (id: string) => (await t.device('GET', `/v1/device/${id}/bind/status`)).json()
  const verify = (payload: object, headers: Record<string, string> = {}, remoteAddress = nextAddress()) =>
    t.app.inject({ method: 'POST', url: '/v1/bind/verify', payload, headers, remoteAddress })

  it('issues a 6-digit code valid for 5 minutes', async () => {
    await t.addDevice('bd-code')
    const before = Date.now()
    const body = await code('bd-code')
    expect(body.success).toBe(true)
    expect(body.code).toMatch(/^\d{6}$/)
    expect(body.expires_at).toBeGreaterThanOrEqual(before + 300_000)
    expect(body.expires_at).toBeLessThanOrEqual(Date.now() + 300_000)
  })

  it('reports an unbound device as {bound:false}', async () => {
    await t.addDevice('bd-free')
    expect(await status('bd-free')).toEqual({ success: true, bound: false })
  })

  it('binds the device to the user of a gateway token, end to end', async () => {
    await t.addDevice('bd-jwt')
    const { code: c } = await code('bd-jwt')
    const res = await verify({ code: c }, { authorization: alice })
    expect(res.statusCode, res.body).toBe(200)
    const body = res.json()
    expect(body).toMatchObject({ success: true, device_id: 'bd-jwt', user_id: 'alice' })
    expect(Number.isInteger(body.bound_at)).toBe(true)
    expect(await status('bd-jwt')).toEqual({ success: true, bound: true, user_id: 'alice', bound_at: body.bound_at })
  })

  it('binds the device to user_id with the console token, and records the operation', async () => {
    await t.addDevice('bd-console')
    const { code: c } = await code('bd-console')
    const res = await verify({ code: c, user_id: 'bob' }, CONSOLE)
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({ device_id: 'bd-console', user_id: 'bob' })
    expect((await status('bd-console')).user_id).toBe('bob')
    const logs = (await t.admin('GET', '/api/admin/logs?source=operation&device_id=bd-console')).json().logs
    expect(logs.map((l: { tag: string }) => l.tag)).toContain('device.bind')
  })

  it('lets an administrator token bind for another user', async () => {
    await t.addDevice('bd-admin')
    const { code: c } = await code('bd-admin')
    expect((await verify({ code: c, user_id: 'bob' }, { authorization: root })).json()).toMatchObject({ user_id: 'bob' })
  })

  it('uses a code once', async () => {
    await t.addDevice('bd-once')
    const { code: c } = await code('bd-once')
    expect((await verify({ code: c }, { authorization: alice })).statusCode).toBe(200)
    const again = await verify({ code: c }, { authorization: alice })
    expect(again.statusCode).toBe(400)
    expect(again.json()).toMatchObject({ success: false, error: 'invalid_code' })
  })

  it('replaces the previous code with a new one', async () => {
    await t.addDevice('bd-replace')
    const first = await code('bd-replace')
    let second = await code('bd-replace')
    while (second.code === first.code) second = await code('bd-replace')
    expect((await verify({ code: first.code }, { authorization: alice })).json().error).toBe('invalid_code')
    expect((await verify({ code: second.code }, { authorization: alice })).statusCode).toBe(200)
  })

  it('rebinds a bound device to the user of a new code', async () => {
    await t.addDevice('bd-rebind')
    await verify({ code: (await code('bd-rebind')).code }, { authorization: alice })
    await verify({ code: (await code('bd-rebind')).code, user_id: 'bob' }, CONSOLE)
    expect((await status('bd-rebind')).user_id).toBe('bob')
  })

  it.each([['000000'], ['12345'], ['abcdef'], ['']])('answers 400 invalid_code to the code %j', async (c) => {
    const res = await verify({ code: c }, { authorization: alice })
    expect(res.statusCode).toBe(400)
    expect(res.json().error).toBe('invalid_code')
  })

  it('answers 401 without a gateway token or the console token, and leaves the code usable', async () => {
    await t.addDevice('bd-anon')
    const { code: c } = await code('bd-anon')
    for (const headers of [{}, { authorization: 'Bearer not.a.token' }, { 'x-console-token': 'wrong' }] as Record<string, string>[]) {
      const res = await verify({ code: c, user_id: 'alice' }, headers)
      expect(res.statusCode).toBe(401)
      expect(res.json().error).toBe('unauthorized')
    }
    expect((await verify({ code: c }, { authorization: alice })).statusCode).toBe(200)
  })

  it('answers 403 when a non-admin user names another user, and 400 when the console names nobody', async () => {
    await t.addDevice('bd-other')
    const { code: c } = await code('bd-other')
    expect((await verify({ code: c, user_id: 'bob' }, { authorization: alice })).statusCode).toBe(403)
    expect((await verify({ code: c }, CONSOLE)).statusCode).toBe(400)
    expect((await verify({ code: c, user_id: 'alice' }, { authorization: alice })).statusCode).toBe(200)
  })

  it.each([[{}], [{ code: 123456 }], [{ code: '123456', extra: 1 }], [{ code: '123456', user_id: '' }]])('rejects the body %j with 400', async (body) => {
    expect((await verify(body, { authorization: alice })).statusCode).toBe(400)
  })

  it('allows 10 tries per minute per client address, then 429 with Retry-After', async () => {
    const ip = nextAddress()
    for (let i = 0; i < 10; i++) expect((await verify({ code: '000000' }, { authorization: alice }, ip)).statusCode).toBe(400)
    const limited = await verify({ code: '000000' }, { authorization: alice }, ip)
    expect(limited.statusCode).toBe(429)
    expect(limited.json()).toMatchObject({ success: false, error: 'rate_limited' })
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0)
    // Another address is not limited.
    expect((await verify({ code: '000000' }, { authorization: alice })).statusCode).toBe(400)
  })

  describe('with a frozen clock', () => {
    let clock: ReturnType<typeof freezeClock>
    afterEach(() => clock.restore())

    it('refuses a code after its 5 minutes', async () => {
      clock = freezeClock()
      await t.addDevice('bd-expiry')
      const { code: c } = await code('bd-expiry')
      clock.advance(300_000)
      const res = await verify({ code: c }, { authorization: alice })
      expect(res.statusCode).toBe(400)
      expect(res.json().error).toBe('invalid_code')
      expect(await status('bd-expiry')).toEqual({ success: true, bound: false })
    })
  })
})
