import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FORWARDED_ENDPOINTS } from '../../src/gateway/forwarding/forwarded-endpoints.js'
import { DIALECTS } from '../helpers/dialects.js'
import { startGatewayApp, type GatewayApp } from './helpers/gateway-app.js'
import { machine, OPERATOR } from './helpers/machine.js'
import { RawDevice } from './helpers/raw-device.js'
import { BODIES, concrete, key } from './helpers/sample-requests.js'

const READS = ['', '/status', '/connection', '/overview']

describe.each(DIALECTS)('who sees and drives which device on %s', (dialect) => {
  let gw: GatewayApp
  let alicesMachine: RawDevice
  let bobsMachine: RawDevice
  beforeAll(async () => {
    gw = await startGatewayApp(dialect)
    alicesMachine = await RawDevice.link(gw.linkUrl, { device_id: 'pnp-alice' }, machine)
    bobsMachine = await RawDevice.link(gw.linkUrl, { device_id: 'pnp-bob' }, machine)
    for (const [user, device] of [['alice', 'pnp-alice'], ['bob', 'pnp-bob']]) {
      const res = await gw.app.inject({ method: 'POST', url: `/api/v1/devices/${device}/auth/login`, headers: { authorization: await gw.auth(user!) }, payload: OPERATOR })
      expect(res.statusCode).toBe(200)
    }
  })
  afterAll(async () => {
    await Promise.all([alicesMachine.close(), bobsMachine.close()])
    await gw.close()
  })

  const as = async (user: string, method: string, url: string, payload?: unknown) =>
    gw.app.inject({ method: method as 'GET', url, headers: { authorization: await gw.auth(user) }, ...(payload ? { payload: payload as object } : {}) })
  const listed = async (user: string) => (await as(user, 'GET', '/api/v1/devices')).json().devices.map((d: { device_id: string }) => d.device_id)

  it('lists only the devices bound to a user, and every device to an administrator', async () => {
    expect(await listed('alice')).toEqual(['pnp-alice'])
    expect(await listed('bob')).toEqual(['pnp-bob'])
    expect(await listed('root')).toEqual(['pnp-alice', 'pnp-bob'])
  })

  it.each(READS)('answers 404 on another user’s device%s, exactly as for an unknown id', async (suffix) => {
    const other = await as('alice', 'GET', `/api/v1/devices/pnp-bob${suffix}`)
    const unknown = await as('alice', 'GET', `/api/v1/devices/pnp-nobody${suffix}`)
    expect(other.statusCode).toBe(404)
    expect(unknown.statusCode).toBe(404)
    expect(other.json()).toEqual({ ...unknown.json(), message: unknown.json().message.replace('pnp-nobody', 'pnp-bob') })
    expect((await as('alice', 'GET', `/api/v1/devices/pnp-alice${suffix}`)).statusCode).toBe(200)
    expect((await as('root', 'GET', `/api/v1/devices/pnp-bob${suffix}`)).statusCode).toBe(200)
  })

  it('never forwards a user’s request to another user’s machine', async () => {
    const before = bobsMachine.requests.length
    for (const endpoint of FORWARDED_ENDPOINTS) {
      const res = await as('alice', endpoint.method, `/api/v1/devices/pnp-bob${concrete(endpoint.path)}`, BODIES[key(endpoint)])
      expect(res.statusCode, `${endpoint.method} ${endpoint.path}`).toBe(404)
    }
    expect(bobsMachine.requests.length).toBe(before)
    const own = await as('alice', 'POST', '/api/v1/devices/pnp-alice/hardware/move', { x: 1 })
    expect(own.json()).toMatchObject({ success: true, data: { path: '/hardware/move', user: 'alice' } })
    const admin = await as('root', 'POST', '/api/v1/devices/pnp-bob/hardware/move', { x: 1 })
    expect(admin.json()).toMatchObject({ success: true, data: { user: 'root' } })
  })

  it('lets every user discover alive devices with minimal records only', async () => {
    const res = await as('alice', 'GET', '/api/v1/devices/discover')
    expect(res.statusCode).toBe(200)
    expect(res.json().devices).toEqual([
      { device_id: 'pnp-alice', hostname: 'pnp-alice', version: '1.0.0', alive: true },
      { device_id: 'pnp-bob', hostname: 'pnp-bob', version: '1.0.0', alive: true },
    ])
  })

  it('refuses non-administrators on /api/v1/admin with 403', async () => {
    for (const [method, url] of [
      ['GET', '/api/v1/admin/bindings'],
      ['GET', '/api/v1/admin/audit'],
      ['DELETE', '/api/v1/admin/bindings/alice/pnp-alice'],
      ['DELETE', '/api/v1/admin/devices/pnp-bob'],
      ['DELETE', '/api/v1/admin/devices/pnp-bob/key'],
    ]) {
      expect((await as('alice', method!, url!)).statusCode, url).toBe(403)
    }
    expect(await listed('bob')).toEqual(['pnp-bob'])
  })

  it('needs a token on every device endpoint', async () => {
    for (const url of ['/api/v1/devices', '/api/v1/devices/discover', '/api/v1/devices/pnp-alice', '/api/v1/devices/pnp-alice/overview']) {
      expect((await gw.app.inject({ method: 'GET', url })).statusCode, url).toBe(401)
    }
  })
})
