import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DIALECTS } from '../helpers/dialects.js'
import { startGatewayApp, type GatewayApp } from './helpers/gateway-app.js'
import { RawDevice, type RequestHandler } from './helpers/raw-device.js'

const PIECES = { system: '/system/status', task: '/tasks/current', hardware: '/hardware/position', vision: '/vision/status', cameras: '/cameras/status', debug: '/debug/status' }

/** Answers each overview source with its path; vision fails with 500 and debug never answers. */
const flaky: RequestHandler = (frame) => {
  if (frame.path === '/vision/status') return { status: 500, data: { error: 'internal', message: 'camera pipeline crashed' } }
  if (frame.path === '/debug/status') return undefined
  return { status: 200, data: { from: frame.path } }
}

describe.each(DIALECTS)('device overview on %s', (dialect) => {
  let gw: GatewayApp
  let root: string
  beforeAll(async () => {
    gw = await startGatewayApp(dialect, { DEVICE_REQUEST_TIMEOUT_MS: '300' })
    root = await gw.auth('root')
  })
  afterAll(() => gw.close())

  const overview = (id: string) => gw.app.inject({ method: 'GET', url: `/api/v1/devices/${id}/overview`, headers: { authorization: root } })

  it('fetches the six pieces at once and reports the ones that fail', async () => {
    const device = await RawDevice.link(gw.linkUrl, { device_id: 'pnp-over', hostname: 'line-3' }, flaky)
    device.heartbeat({ state: 'running' })
    await expect.poll(async () => (await overview('pnp-over')).json().status).toEqual({ state: 'running' })
    const res = await overview('pnp-over')
    expect(res.statusCode).toBe(200)
    const body = res.json()
    expect(body).toMatchObject({
      success: true,
      device: { device_id: 'pnp-over', hostname: 'line-3', alive: true, registered: true },
      connection: { connected: true, alive: true },
      status: { state: 'running' },
      detail: {
        system: { from: '/system/status' },
        task: { from: '/tasks/current' },
        hardware: { from: '/hardware/position' },
        cameras: { from: '/cameras/status' },
        vision: {},
        debug: {},
      },
      partial: true,
    })
    expect(body.partial_errors).toEqual({
      vision: { error: 'device_error', message: 'camera pipeline crashed', status: 500 },
      debug: { error: 'device_timeout', message: expect.any(String) },
    })
    const paths = device.requests.slice(-6).map((r) => `${r.method} ${r.path}`).sort()
    expect(paths).toEqual(Object.values(PIECES).map((p) => `GET ${p}`).sort())
    await device.close()
  })

  it('reports partial false when every piece arrives', async () => {
    const device = await RawDevice.link(gw.linkUrl, { device_id: 'pnp-over-ok' })
    const body = (await overview('pnp-over-ok')).json()
    expect(body.partial).toBe(false)
    expect(body.partial_errors).toEqual({})
    expect(Object.keys(body.detail).sort()).toEqual(Object.keys(PIECES).sort())
    await device.close()
  })

  it('answers 200 for an offline device with every piece in partial_errors', async () => {
    const device = await RawDevice.link(gw.linkUrl, { device_id: 'pnp-over-off' })
    await device.close()
    await expect.poll(async () => (await overview('pnp-over-off')).json().connection.connected).toBe(false)
    const res = await overview('pnp-over-off')
    expect(res.statusCode).toBe(200)
    const body = res.json()
    expect(body).toMatchObject({ success: true, partial: true, device: { alive: false, connected: false }, detail: { system: {}, task: {}, hardware: {}, vision: {}, cameras: {}, debug: {} } })
    for (const piece of Object.keys(PIECES)) expect(body.partial_errors[piece]).toMatchObject({ error: 'device_unavailable' })
  })

  it('answers 404 for an unknown device', async () => {
    expect((await overview('pnp-over-none')).statusCode).toBe(404)
  })
})
