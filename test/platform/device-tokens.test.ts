import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DIALECTS } from '../helpers/dialects.js'
import { CONSOLE, startPlatformApp, type PlatformApp } from './platform-kit.js'

describe.each(DIALECTS)('platform device tokens on %s', (dialect) => {
  let t: PlatformApp
  let token: string
  beforeAll(async () => {
    t = await startPlatformApp(dialect, { PLATFORM_REQUIRE_DEVICE_TOKEN: 'true' })
    token = await t.addDevice('tok-1')
  })
  afterAll(() => t.close())

  const calls = [
    ['POST', '/v1/device/heartbeat', { device_id: 'tok-1' }],
    ['GET', '/v1/device/tok-1', undefined],
    ['POST', '/v1/device/tok-1/telemetry', { values: { a: 1 } }],
    ['GET', '/v1/device/tok-1/commands', undefined],
    ['GET', '/v1/device/tok-1/config', undefined],
    ['POST', '/v1/device/tok-1/logs', { message: 'hello' }],
    ['POST', '/v1/device/tok-1/time/sync', { device_time: 1 }],
    ['GET', '/v1/device/tok-1/bind/status', undefined],
    ['GET', '/v1/ota/check?device_id=tok-1&version=1', undefined],
  ] as const

  it.each(calls)('answers 401 to %s %s without X-Device-Token', async (method, url, payload) => {
    const res = await t.device(method, url, payload)
    expect(res.statusCode).toBe(401)
    expect(res.json()).toMatchObject({ success: false, error: 'unauthorized' })
  })

  it.each(calls)('answers 401 to %s %s with a wrong X-Device-Token', async (method, url, payload) => {
    expect((await t.device(method, url, payload, `${token}x`)).statusCode).toBe(401)
  })

  it.each(calls)('serves %s %s with the token issued at device/add', async (method, url, payload) => {
    expect((await t.device(method, url, payload, token)).statusCode).toBe(200)
  })

  it('does not accept the token of another device', async () => {
    const other = await t.addDevice('tok-2')
    expect((await t.device('GET', '/v1/device/tok-1/config', undefined, other)).statusCode).toBe(401)
  })

  it('stores only a hash of the token', async () => {
    const row = await t.storage.db.selectFrom('platform_devices').selectAll().where('device_id', '=', 'tok-1').executeTakeFirstOrThrow()
    expect(row.token_hash).toMatch(/^[0-9a-f]{64}$/)
    expect(JSON.stringify(row)).not.toContain(token)
  })

  it('lets the console act for a device with X-Console-Token', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/device/tok-1/config', headers: CONSOLE })
    expect(res.statusCode).toBe(200)
  })

  it('rotates a token: the new one works, the old one no longer does', async () => {
    const res = await t.admin('POST', '/api/admin/device/tok-1/token')
    expect(res.statusCode).toBe(200)
    const fresh = res.json().device_token as string
    expect(fresh).not.toBe(token)
    expect((await t.device('GET', '/v1/device/tok-1/config', undefined, token)).statusCode).toBe(401)
    expect((await t.device('GET', '/v1/device/tok-1/config', undefined, fresh)).statusCode).toBe(200)
    token = fresh
  })

  it('still answers 404 unknown_device for an unknown id', async () => {
    expect((await t.device('GET', '/v1/device/nobody/config', undefined, token)).json().error).toBe('unknown_device')
  })
})

describe.each(DIALECTS)('platform without required device tokens on %s', (dialect) => {
  it('serves device calls with no token at all', async () => {
    const t = await startPlatformApp(dialect)
    try {
      await t.addDevice('open-1')
      expect((await t.device('GET', '/v1/device/open-1/config')).statusCode).toBe(200)
      expect((await t.device('POST', '/v1/device/heartbeat', { device_id: 'open-1' })).statusCode).toBe(200)
    } finally {
      await t.close()
    }
  })
})
