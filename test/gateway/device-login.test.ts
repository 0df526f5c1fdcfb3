import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DIALECTS } from '../helpers/dialects.js'
import { startGatewayApp, type GatewayApp } from './helpers/gateway-app.js'
import { machine, OPERATOR } from './helpers/machine.js'
import { RawDevice } from './helpers/raw-device.js'

describe.each(DIALECTS)('device login on %s', (dialect) => {
  let gw: GatewayApp
  const devices: RawDevice[] = []
  beforeAll(async () => {
    gw = await startGatewayApp(dialect, { DEVICE_REQUEST_TIMEOUT_MS: '300' })
    devices.push(await RawDevice.link(gw.linkUrl, { device_id: 'pnp-login' }, machine))
    devices.push(await RawDevice.link(gw.linkUrl, { device_id: 'pnp-login-silent' }, () => undefined))
    devices.push(await RawDevice.link(gw.linkUrl, { device_id: 'pnp-login-odd' }, () => ({ status: 200, data: { ok: true } })))
  })
  afterAll(async () => {
    await Promise.all(devices.map((d) => d.close()))
    await gw.close()
  })

  const login = async (as: string, deviceId: string, body: unknown, remoteAddress = '127.0.0.1') =>
    gw.app.inject({
      method: 'POST',
      url: `/api/v1/devices/${deviceId}/auth/login`,
      headers: { authorization: await gw.auth(as) },
      payload: body as object,
      remoteAddress,
    })
  const visible = async (as: string, deviceId: string) =>
    (await gw.app.inject({ method: 'GET', url: `/api/v1/devices/${deviceId}`, headers: { authorization: await gw.auth(as) } })).statusCode

  it('forwards the credentials as POST /auth/login and binds the caller when the device accepts them', async () => {
    expect(await visible('alice', 'pnp-login')).toBe(404)
    const res = await login('alice', 'pnp-login', OPERATOR)
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ success: true, device_id: 'pnp-login', user: { username: 'operator', role: 'operator', display_name: 'Operator' } })
    expect(devices[0]!.requests.at(-1)).toMatchObject({ method: 'POST', path: '/auth/login', body: OPERATOR, user: { id: 'alice', username: 'alice', role: 'user' } })
    expect(await visible('alice', 'pnp-login')).toBe(200)
    expect(await visible('bob', 'pnp-login')).toBe(404)
  })

  it('passes a device 401 and 403 through as device_auth_failed without binding', async () => {
    const wrong = await login('bob', 'pnp-login', { username: 'operator', password: 'nope' }, '10.1.0.1')
    expect(wrong.statusCode).toBe(401)
    expect(wrong.json()).toMatchObject({ success: false, error: 'device_auth_failed' })
    const locked = await login('bob', 'pnp-login', { username: 'locked', password: 'x' }, '10.1.0.1')
    expect(locked.statusCode).toBe(403)
    expect(locked.json()).toMatchObject({ success: false, error: 'device_auth_failed' })
    expect(await visible('bob', 'pnp-login')).toBe(404)
  })

  it('answers 502 for a device that is not linked and 504 for a silent one', async () => {
    const offline = await login('alice', 'pnp-login-nowhere', OPERATOR)
    expect(offline.statusCode).toBe(502)
    expect(offline.json()).toMatchObject({ error: 'device_unavailable' })
    const silent = await login('alice', 'pnp-login-silent', OPERATOR)
    expect(silent.statusCode).toBe(504)
    expect(silent.json()).toMatchObject({ error: 'device_timeout' })
  })

  it('answers 502 bad_device_response when the device accepts without a user object', async () => {
    const res = await login('alice', 'pnp-login-odd', OPERATOR)
    expect(res.statusCode).toBe(502)
    expect(res.json()).toMatchObject({ error: 'bad_device_response' })
    expect(await visible('alice', 'pnp-login-odd')).toBe(404)
  })

  it('refuses malformed credentials with 400 without forwarding', async () => {
    const before = devices[0]!.requests.length
    for (const body of [{}, { username: 'operator' }, { username: 'operator', password: 5 }, { username: '', password: 'x' }]) {
      expect((await login('alice', 'pnp-login', body)).statusCode).toBe(400)
    }
    expect(devices[0]!.requests.length).toBe(before)
  })

  it('rate-limits after 10 failures per client address and device-side username, even the right password', async () => {
    const ip = '10.2.0.1'
    for (let i = 0; i < 10; i++) expect((await login('bob', 'pnp-login', { username: 'operator', password: 'bad' }, ip)).statusCode).toBe(401)
    const limited = await login('bob', 'pnp-login', OPERATOR, ip)
    expect(limited.statusCode).toBe(429)
    expect(limited.json()).toMatchObject({ success: false, error: 'rate_limited' })
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0)
    expect((await login('bob', 'pnp-login', OPERATOR, '10.2.0.2')).statusCode).toBe(200)
    // The gateway's own login is throttled separately.
    const gatewayLogin = await gw.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'bob', password: 'bob-password' }, remoteAddress: ip })
    expect(gatewayLogin.statusCode).toBe(200)
  })

  it('lets at most 10 of 50 concurrent wrong device logins reach the device', async () => {
    const ip = '10.2.1.1'
    const before = devices[0]!.requests.length
    const statuses = (await Promise.all(Array.from({ length: 50 }, () => login('bob', 'pnp-login', { username: 'operator', password: 'bad' }, ip)))).map((r) => r.statusCode)
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(10)
    expect(statuses.filter((s) => s !== 401 && s !== 429)).toEqual([])
    expect(devices[0]!.requests.length - before).toBeLessThanOrEqual(10)
  })

  it('does not count attempts the device never judged (offline, silent)', async () => {
    const ip = '10.2.2.2'
    for (let i = 0; i < 12; i++) expect((await login('bob', 'pnp-absent', OPERATOR, ip)).statusCode).toBe(502)
    expect((await login('bob', 'pnp-login', OPERATOR, ip)).statusCode).toBe(200)
  })

  it('needs a token', async () => {
    const res = await gw.app.inject({ method: 'POST', url: '/api/v1/devices/pnp-login/auth/login', payload: OPERATOR })
    expect(res.statusCode).toBe(401)
  })
})
