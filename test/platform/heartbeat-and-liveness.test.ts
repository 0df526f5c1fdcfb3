import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { DIALECTS } from '../helpers/dialects.js'
import { freezeClock } from './fake-clock.js'
import { startPlatformApp, type PlatformApp } from './platform-kit.js'

describe.each(DIALECTS)('platform heartbeat and liveness on %s', (dialect) => {
  let t: PlatformApp
  beforeAll(async () => {
    t = await startPlatformApp(dialect, { PLATFORM_OFFLINE_SECONDS: '60' })
    await t.addDevice('hb-1', 'bot-1')
  })
  afterAll(() => t.close())

  it('answers a heartbeat with the server time in ms and the number of pending commands', async () => {
    await t.admin('POST', '/api/admin/device/hb-1/command', { action: 'ping', params: {} })
    const before = Date.now()
    const res = await t.device('POST', '/v1/device/heartbeat', { device_id: 'hb-1' })
    expect(res.statusCode).toBe(200)
    const body = res.json()
    expect(body).toMatchObject({ success: true, pending_commands: 1 })
    expect(Number.isInteger(body.server_time)).toBe(true)
    expect(body.server_time).toBeGreaterThanOrEqual(before)
  })

  it('stores what the heartbeat reports and shows it in the device info', async () => {
    const res = await t.device('POST', '/v1/device/heartbeat', {
      device_id: 'hb-1',
      firmware_version: '2.1.0',
      ip: '10.1.2.3',
      model: 'bot-2',
      uptime_s: 3600,
      rssi: -61,
    })
    expect(res.statusCode).toBe(200)
    const info = await t.device('GET', '/v1/device/hb-1')
    expect(info.statusCode).toBe(200)
    expect(info.json()).toMatchObject({
      success: true,
      device: { device_id: 'hb-1', model: 'bot-2', firmware_version: '2.1.0', ip: '10.1.2.3', online: true, uptime_s: 3600, rssi: -61 },
    })
    const { device } = info.json()
    expect(Number.isInteger(device.last_online_at)).toBe(true)
    expect(Number.isInteger(device.created_at)).toBe(true)
    expect(device).toHaveProperty('expression', null)
  })

  it('takes the connection address as ip when the device does not report one', async () => {
    await t.addDevice('hb-ip')
    await t.app.inject({ method: 'POST', url: '/v1/device/heartbeat', payload: { device_id: 'hb-ip' }, remoteAddress: '192.0.2.7' })
    expect((await t.device('GET', '/v1/device/hb-ip')).json().device.ip).toBe('192.0.2.7')
  })

  it('accepts and ignores heartbeat fields it does not know', async () => {
    const res = await t.device('POST', '/v1/device/heartbeat', { device_id: 'hb-1', free_heap: 12345 })
    expect(res.statusCode).toBe(200)
  })

  it.each([
    ['a device_id that is not an identifier', { device_id: 'bad id!' }],
    ['a missing device_id', { firmware_version: '1' }],
    ['"."', { device_id: '.' }],
    ['a numeric uptime_s sent as a string', { device_id: 'hb-1', uptime_s: '5' }],
    ['rssi as a string', { device_id: 'hb-1', rssi: '-50' }],
    ['firmware_version longer than 64', { device_id: 'hb-1', firmware_version: 'v'.repeat(65) }],
    ['ip longer than 64', { device_id: 'hb-1', ip: '1'.repeat(65) }],
    ['model as a number', { device_id: 'hb-1', model: 7 }],
  ])('rejects %s with 400', async (_what, payload) => {
    const res = await t.device('POST', '/v1/device/heartbeat', payload)
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ success: false, error: 'bad_request' })
  })

  it('answers 404 unknown_device to a heartbeat of an unknown id without auto-registration', async () => {
    const res = await t.device('POST', '/v1/device/heartbeat', { device_id: 'nobody' })
    expect(res.statusCode).toBe(404)
    expect(res.json()).toMatchObject({ success: false, error: 'unknown_device' })
  })

  it.each([
    ['GET', '/v1/device/nobody', undefined],
    ['POST', '/v1/device/nobody/telemetry', { values: { a: 1 } }],
    ['POST', '/v1/device/nobody/telemetry/batch', [{ values: { a: 1 } }]],
    ['GET', '/v1/device/nobody/commands', undefined],
    ['POST', '/v1/device/nobody/commands/ack', { id: 1, success: true }],
    ['GET', '/v1/device/nobody/config', undefined],
    ['POST', '/v1/device/nobody/config', { config: {} }],
    ['POST', '/v1/device/nobody/logs', { message: 'x' }],
    ['POST', '/v1/device/nobody/logs/batch', [{ message: 'x' }]],
    ['POST', '/v1/device/nobody/time/sync', { device_time: 1 }],
    ['GET', '/v1/device/nobody/bind/code', undefined],
    ['GET', '/v1/device/nobody/bind/status', undefined],
    ['GET', '/svc/upgrade/check?device_id=nobody&version=1', undefined],
    ['GET', '/v1/ota/check?device_id=nobody&version=1', undefined],
  ] as const)('answers 404 unknown_device to %s %s', async (method, url, payload) => {
    const res = await t.device(method, url, payload)
    expect(res.statusCode).toBe(404)
    expect(res.json()).toMatchObject({ success: false, error: 'unknown_device' })
  })

  it('answers 400 to a device id in a path that is not an identifier', async () => {
    for (const url of ['/v1/device/..', '/v1/device/a%2Fb/config', `/v1/device/${'x'.repeat(65)}/config`, '/v1/device/bad%20id/config']) {
      const res = await t.device('GET', url)
      expect([400, 404], url).toContain(res.statusCode)
      if (res.statusCode === 404) expect(res.json().error).not.toBe('unknown_device')
    }
  })

  describe('with a frozen clock', () => {
    let clock: ReturnType<typeof freezeClock>
    afterEach(() => clock.restore())

    it('goes offline 60 s after the last heartbeat and online again with the next one', async () => {
      clock = freezeClock()
      await t.addDevice('hb-live')
      const online = async () => (await t.device('GET', '/v1/device/hb-live')).json().device.online as boolean
      expect(await online()).toBe(false)
      await t.device('POST', '/v1/device/heartbeat', { device_id: 'hb-live' })
      expect(await online()).toBe(true)
      clock.advance(60_000)
      expect(await online()).toBe(true)
      clock.advance(1)
      expect(await online()).toBe(false)
      const summary = (await t.admin('GET', '/api/admin/summary')).json()
      expect(summary.devices.offline).toBeGreaterThanOrEqual(1)
      await t.device('POST', '/v1/device/heartbeat', { device_id: 'hb-live' })
      expect(await online()).toBe(true)
    })
  })
})

describe.each(DIALECTS)('platform auto-registration on %s', (dialect) => {
  it('creates an unknown device from its heartbeat when PLATFORM_AUTO_REGISTER=true', async () => {
    const t = await startPlatformApp(dialect, { PLATFORM_AUTO_REGISTER: 'true' })
    try {
      const res = await t.device('POST', '/v1/device/heartbeat', { device_id: 'auto-1', model: 'm-9', firmware_version: '0.9', ip: '10.0.0.9' })
      expect(res.statusCode).toBe(200)
      expect(res.json()).toMatchObject({ success: true, pending_commands: 0 })
      const info = await t.device('GET', '/v1/device/auto-1')
      expect(info.json().device).toMatchObject({ device_id: 'auto-1', model: 'm-9', firmware_version: '0.9', ip: '10.0.0.9', online: true })
      // Only the heartbeat registers: other calls for unknown ids stay 404.
      expect((await t.device('GET', '/v1/device/auto-2')).statusCode).toBe(404)
    } finally {
      await t.close()
    }
  })

  it('answers 401 to an unknown heartbeat when device tokens are required too, and creates nothing', async () => {
    const t = await startPlatformApp(dialect, { PLATFORM_AUTO_REGISTER: 'true', PLATFORM_REQUIRE_DEVICE_TOKEN: 'true' })
    try {
      const res = await t.device('POST', '/v1/device/heartbeat', { device_id: 'auto-3' })
      expect(res.statusCode).toBe(401)
      expect(res.json()).toMatchObject({ success: false, error: 'unauthorized' })
      expect((await t.admin('GET', '/api/admin/device/auto-3/detail')).statusCode).toBe(404)
    } finally {
      await t.close()
    }
  })
})
