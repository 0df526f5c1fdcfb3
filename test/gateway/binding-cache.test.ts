import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BindingCache } from '../../src/gateway/devices/binding-cache.js'
import { databaseUnavailable } from '../../src/storage/unreachable-database.js'
import { DIALECTS, testDatabase, type TestDatabase } from '../helpers/dialects.js'
import { startGatewayApp, type GatewayApp } from './helpers/gateway-app.js'
import { machine, OPERATOR } from './helpers/machine.js'
import { RawDevice, uniqueDeviceId } from './helpers/raw-device.js'
import { natsSuitesRunnable, TEST_NATS_URL } from '../helpers/nats.js'

const NATS_URL = TEST_NATS_URL

const as = async (gw: GatewayApp, user: string, method: string, url: string, payload?: unknown) =>
  gw.app.inject({ method: method as 'GET', url, headers: { authorization: await gw.auth(user) }, ...(payload !== undefined ? { payload: payload as object } : {}) })
const position = (gw: GatewayApp, id: string, user = 'alice') => as(gw, user, 'GET', `/api/v1/devices/${id}/hardware/position`).then((r) => r.statusCode)
const bind = async (gw: GatewayApp, id: string, user = 'alice') => expect((await as(gw, user, 'POST', `/api/v1/devices/${id}/auth/login`, OPERATOR)).statusCode).toBe(200)
/** Deletes a binding behind the gateway's back (no announcement): only the cache still knows it. */
const deleteQuietly = (gw: GatewayApp, id: string) => gw.storage.db.deleteFrom('user_device_bindings').where('device_id', '=', id).execute()

describe.each(DIALECTS)('binding checks of forwarded requests are cached on %s', (dialect) => {
  let gw: GatewayApp
  beforeAll(async () => {
    gw = await startGatewayApp(dialect)
  })
  afterAll(async () => gw.close())

  it('answers from memory once a binding was seen', async () => {
    const id = uniqueDeviceId()
    const device = await RawDevice.link(gw.linkUrl, { device_id: id }, machine)
    await bind(gw, id)
    expect(await position(gw, id)).toBe(200)
    await deleteQuietly(gw, id)
    expect(await position(gw, id)).toBe(200)
    await device.close()
  })

  it('stops forwarding at once when an administrator deletes the binding', async () => {
    const id = uniqueDeviceId()
    const device = await RawDevice.link(gw.linkUrl, { device_id: id }, machine)
    await bind(gw, id)
    expect(await position(gw, id)).toBe(200)
    expect((await as(gw, 'root', 'DELETE', `/api/v1/admin/bindings/alice/${id}`)).statusCode).toBe(200)
    expect(await position(gw, id)).toBe(404)
    await bind(gw, id)
    expect(await position(gw, id)).toBe(200)
    await device.close()
  })

  it('forgets every user’s binding of a forgotten device', async () => {
    const id = uniqueDeviceId()
    const device = await RawDevice.link(gw.linkUrl, { device_id: id }, machine)
    await bind(gw, id, 'alice')
    await bind(gw, id, 'bob')
    expect([await position(gw, id, 'alice'), await position(gw, id, 'bob')]).toEqual([200, 200])
    expect((await as(gw, 'root', 'DELETE', `/api/v1/admin/devices/${id}`)).statusCode).toBe(200)
    expect([await position(gw, id, 'alice'), await position(gw, id, 'bob')]).toEqual([404, 404])
    await device.close()
  })

  it('keeps another user’s cached binding when one user is unbound', async () => {
    const id = uniqueDeviceId()
    const device = await RawDevice.link(gw.linkUrl, { device_id: id }, machine)
    await bind(gw, id, 'alice')
    await bind(gw, id, 'bob')
    expect([await position(gw, id, 'alice'), await position(gw, id, 'bob')]).toEqual([200, 200])
    expect((await as(gw, 'root', 'DELETE', `/api/v1/admin/bindings/alice/${id}`)).statusCode).toBe(200)
    expect([await position(gw, id, 'alice'), await position(gw, id, 'bob')]).toEqual([404, 200])
    await device.close()
  })
})

describe('BindingCache', () => {
  it('does not store a lookup that raced with a removal', async () => {
    const cache = new BindingCache()
    let finish!: (bound: boolean) => void
    const lookup = cache.isBound('alice', 'pnp-1', () => new Promise((resolve) => (finish = resolve)))
    cache.remove({ device_id: 'pnp-1', username: 'alice' })
    finish(true)
    expect(await lookup).toBe(true)
    expect(cache.size).toBe(0)
  })

  it("forgets one binding, a device's bindings or all of them, and stays within its bound", async () => {
    const cache = new BindingCache(60_000, 3)
    const bound = async () => true
    for (const [user, device] of [['alice', 'pnp-1'], ['bob', 'pnp-1'], ['alice', 'pnp-2']]) await cache.isBound(user!, device!, bound)
    expect(cache.size).toBe(3)
    cache.remove({ device_id: 'pnp-1', username: 'bob' })
    expect([cache.knownBound('alice', 'pnp-1'), cache.knownBound('bob', 'pnp-1'), cache.size]).toEqual([true, false, 2])
    await cache.isBound('bob', 'pnp-1', bound)
    cache.remove({ device_id: 'pnp-1' })
    expect([cache.knownBound('alice', 'pnp-1'), cache.knownBound('bob', 'pnp-1'), cache.knownBound('alice', 'pnp-2'), cache.size]).toEqual([false, false, true, 1])
    // Full: remembering a fourth binding drops the one remembered first.
    for (const [user, device] of [['carol', 'pnp-3'], ['dave', 'pnp-3'], ['erin', 'pnp-4']]) await cache.isBound(user!, device!, bound)
    expect(cache.size).toBe(3)
    expect(['alice/pnp-2', 'carol/pnp-3', 'dave/pnp-3', 'erin/pnp-4'].map((k) => cache.knownBound(k.split('/')[0]!, k.split('/')[1]!))).toEqual([false, true, true, true])
    cache.remove({ all: true })
    expect([cache.knownBound('erin', 'pnp-4'), cache.size]).toEqual([false, 0])
  })

  it('serves nothing from memory while disabled, and expires entries', async () => {
    const cache = new BindingCache(0)
    let loads = 0
    const load = async () => (++loads, true)
    await cache.isBound('alice', 'pnp-1', load)
    await cache.isBound('alice', 'pnp-1', load)
    expect(loads).toBe(2)
    const kept = new BindingCache()
    await kept.isBound('alice', 'pnp-1', load)
    kept.setEnabled(false)
    await kept.isBound('alice', 'pnp-1', load)
    expect(loads).toBe(4)
    kept.setEnabled(true)
    await kept.isBound('alice', 'pnp-1', load)
    await kept.isBound('alice', 'pnp-1', load)
    expect(loads).toBe(5)
  })

  it('answers from an expired entry while the database cannot be reached, unless the binding was removed or found gone', async () => {
    const cache = new BindingCache(0)
    const outage = async (): Promise<boolean> => {
      throw databaseUnavailable(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }))
    }
    const unavailable = { code: 'service_unavailable' }
    for (const [user, device] of [['alice', 'pnp-1'], ['bob', 'pnp-1'], ['carol', 'pnp-2']]) await cache.isBound(user!, device!, async () => true)
    expect(cache.knownBound('alice', 'pnp-1')).toBe(false)
    expect(await cache.isBound('alice', 'pnp-1', outage)).toBe(true)
    // Never seen, removed since, or found unbound by the last lookup: the outage shows.
    await expect(cache.isBound('dave', 'pnp-1', outage)).rejects.toMatchObject(unavailable)
    cache.remove({ device_id: 'pnp-1', username: 'bob' })
    await expect(cache.isBound('bob', 'pnp-1', outage)).rejects.toMatchObject(unavailable)
    expect(await cache.isBound('carol', 'pnp-2', async () => false)).toBe(false)
    await expect(cache.isBound('carol', 'pnp-2', outage)).rejects.toMatchObject(unavailable)
    // Any other failure is not an outage: it is never covered up.
    await expect(cache.isBound('alice', 'pnp-1', async () => Promise.reject(new Error('syntax error')))).rejects.toThrow('syntax error')
  })
})


describe.skipIf(!(await natsSuitesRunnable({ needsPostgres: true })))('binding removals reach every instance over NATS', () => {
  let database: TestDatabase
  let a: GatewayApp
  let b: GatewayApp
  beforeAll(async () => {
    database = testDatabase('postgres')
    a = await startGatewayApp('postgres', { NATS_URL }, { database })
    b = await startGatewayApp('postgres', { NATS_URL }, { database })
  })
  afterAll(async () => {
    await a?.close()
    await b?.close()
    await database?.cleanup()
  })

  it('a binding deleted on A stops requests made on B', async () => {
    const id = uniqueDeviceId()
    const device = await RawDevice.link(a.linkUrl, { device_id: id }, machine)
    await bind(a, id)
    expect(await position(b, id)).toBe(200)
    expect((await as(a, 'root', 'DELETE', `/api/v1/admin/bindings/alice/${id}`)).statusCode).toBe(200)
    await expect.poll(() => position(b, id)).toBe(404)
    await device.close()
  })

  it('a device forgotten on B stops requests made on A', async () => {
    const id = uniqueDeviceId()
    const device = await RawDevice.link(a.linkUrl, { device_id: id }, machine)
    await bind(a, id)
    expect(await position(a, id)).toBe(200)
    expect((await as(b, 'root', 'DELETE', `/api/v1/admin/devices/${id}`)).statusCode).toBe(200)
    await expect.poll(() => position(a, id)).toBe(404)
    await device.close()
  })
})
