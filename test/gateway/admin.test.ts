import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { writeAudit } from '../../src/storage/audit-repository.js'
import { DIALECTS } from '../helpers/dialects.js'
import { startGatewayApp, type GatewayApp } from './helpers/gateway-app.js'
import { machine, OPERATOR } from './helpers/machine.js'
import { RawDevice } from './helpers/raw-device.js'

describe.each(DIALECTS)('gateway administration on %s', (dialect) => {
  let gw: GatewayApp
  beforeAll(async () => {
    gw = await startGatewayApp(dialect)
  })
  afterAll(() => gw.close())

  const as = async (user: string, method: string, url: string, payload?: unknown) =>
    gw.app.inject({ method: method as 'GET', url, headers: { authorization: await gw.auth(user) }, ...(payload ? { payload: payload as object } : {}) })
  const bindTo = async (user: string, deviceId: string) => expect((await as(user, 'POST', `/api/v1/devices/${deviceId}/auth/login`, OPERATOR)).statusCode).toBe(200)

  it('lists bindings with filters and pages, and deleting one takes the device away from its user', async () => {
    const device = await RawDevice.link(gw.linkUrl, { device_id: 'pnp-adm-1' }, machine)
    await bindTo('alice', 'pnp-adm-1')
    await bindTo('bob', 'pnp-adm-1')
    const all = (await as('root', 'GET', '/api/v1/admin/bindings?device_id=pnp-adm-1')).json()
    expect(all.bindings.map((b: { username: string }) => b.username)).toEqual(['alice', 'bob'])
    expect(all.bindings[0]).toEqual({ id: expect.any(Number), username: 'alice', user_id: 'alice', device_id: 'pnp-adm-1', created_at: expect.any(Number) })
    const page = (await as('root', 'GET', '/api/v1/admin/bindings?device_id=pnp-adm-1&limit=1')).json()
    expect(page.bindings).toHaveLength(1)
    const next = (await as('root', 'GET', `/api/v1/admin/bindings?device_id=pnp-adm-1&limit=1&after=${page.next_after}`)).json()
    expect(next.bindings.map((b: { username: string }) => b.username)).toEqual(['bob'])
    expect((await as('root', 'GET', '/api/v1/admin/bindings?username=bob')).json().bindings).toHaveLength(1)

    expect((await as('alice', 'GET', '/api/v1/devices/pnp-adm-1')).statusCode).toBe(200)
    const deleted = await as('root', 'DELETE', '/api/v1/admin/bindings/alice/pnp-adm-1')
    expect(deleted.json()).toEqual({ success: true, username: 'alice', device_id: 'pnp-adm-1', deleted: true })
    expect((await as('alice', 'GET', '/api/v1/devices/pnp-adm-1')).statusCode).toBe(404)
    expect((await as('bob', 'GET', '/api/v1/devices/pnp-adm-1')).statusCode).toBe(200)
    expect((await as('root', 'DELETE', '/api/v1/admin/bindings/alice/pnp-adm-1')).statusCode).toBe(404)
    await device.close()
  })

  it.each(['?limit=0', '?limit=1001', '?after=-1', '?after=x', '?device_id=a%2Fb'])('refuses the binding query %s with 400', async (query) => {
    expect((await as('root', 'GET', `/api/v1/admin/bindings${query}`)).statusCode).toBe(400)
  })

  it('forgets a device: closes its link with 4401, drops its record and bindings, writes an audit record', async () => {
    const device = await RawDevice.link(gw.linkUrl, { device_id: 'pnp-adm-2' }, machine)
    await bindTo('alice', 'pnp-adm-2')
    const res = await as('root', 'DELETE', '/api/v1/admin/devices/pnp-adm-2')
    expect(res.json()).toEqual({ success: true, device_id: 'pnp-adm-2', forgotten: true })
    expect((await device.closed).code).toBe(4401)
    expect((await as('root', 'GET', '/api/v1/devices/pnp-adm-2')).statusCode).toBe(404)
    expect((await as('root', 'GET', '/api/v1/admin/bindings?device_id=pnp-adm-2')).json().bindings).toEqual([])
    const audit = (await as('root', 'GET', '/api/v1/admin/audit?action=device.forget')).json()
    expect(audit.records[0]).toMatchObject({ actor: 'root', action: 'device.forget', device_id: 'pnp-adm-2', outcome: 'forgotten' })
    expect((await as('root', 'DELETE', '/api/v1/admin/devices/pnp-adm-2')).statusCode).toBe(404)
    // Forgotten means never seen: any key may enroll the id again.
    const reborn = await RawDevice.link(gw.linkUrl, { device_id: 'pnp-adm-2', key: 'a-brand-new-key-0000' })
    await reborn.close()
  })

  it('resets a device key so the next key presented is trusted', async () => {
    const device = await RawDevice.link(gw.linkUrl, { device_id: 'pnp-adm-3' })
    await device.close()
    const other = await RawDevice.open(gw.linkUrl)
    await expect(other.register({ device_id: 'pnp-adm-3', key: 'replacement-key-0000' })).rejects.toThrow(/4401/)
    const res = await as('root', 'DELETE', '/api/v1/admin/devices/pnp-adm-3/key')
    expect(res.json()).toEqual({ success: true, device_id: 'pnp-adm-3', key_reset: true })
    const replaced = await RawDevice.link(gw.linkUrl, { device_id: 'pnp-adm-3', key: 'replacement-key-0000' })
    await replaced.close()
    const original = await RawDevice.open(gw.linkUrl)
    await expect(original.register({ device_id: 'pnp-adm-3' })).rejects.toThrow(/4401/)
    expect((await as('root', 'DELETE', '/api/v1/admin/devices/pnp-nobody/key')).statusCode).toBe(404)
    const audit = (await as('root', 'GET', '/api/v1/admin/audit?action=device.key_reset')).json()
    expect(audit.records.map((r: { outcome: string; device_id: string }) => [r.device_id, r.outcome])).toEqual([
      ['pnp-nobody', 'not_found'],
      ['pnp-adm-3', 'reset'],
    ])
  })

  it('closes the current link of a device whose key is reset with 4401', async () => {
    const device = await RawDevice.link(gw.linkUrl, { device_id: 'pnp-adm-4' })
    expect((await as('root', 'DELETE', '/api/v1/admin/devices/pnp-adm-4/key')).statusCode).toBe(200)
    expect((await device.closed).code).toBe(4401)
    const replaced = await RawDevice.link(gw.linkUrl, { device_id: 'pnp-adm-4', key: 'replacement-key-0004' })
    expect((await as('root', 'GET', '/api/v1/devices/pnp-adm-4')).json().device).toMatchObject({ alive: true })
    await replaced.close()
  })

  it('lists audit records newest first with filters and a cursor', async () => {
    const db = gw.storage.db
    for (let i = 1; i <= 3; i++) await writeAudit(db, { actor: 'ci', action: 'firmware.upload', outcome: 'published', release_id: `r${i}` })
    const all = (await as('root', 'GET', '/api/v1/admin/audit?actor=ci')).json()
    expect(all.records.map((r: { release_id: string }) => r.release_id)).toEqual(['r3', 'r2', 'r1'])
    expect(all.records[0]).toEqual({ id: expect.any(Number), at: expect.any(Number), actor: 'ci', action: 'firmware.upload', release_id: 'r3', device_id: null, outcome: 'published', detail: {} })
    const first = (await as('root', 'GET', '/api/v1/admin/audit?actor=ci&limit=2')).json()
    expect(first.records).toHaveLength(2)
    const rest = (await as('root', 'GET', `/api/v1/admin/audit?actor=ci&limit=2&before=${first.next_before}`)).json()
    expect(rest.records.map((r: { release_id: string }) => r.release_id)).toEqual(['r1'])
    expect(rest.next_before).toBeUndefined()
    expect((await as('root', 'GET', '/api/v1/admin/audit?release_id=r2')).json().records).toHaveLength(1)
    for (const bad of ['?limit=0', '?limit=1001', '?before=abc', '?release_id=..']) {
      expect((await as('root', 'GET', `/api/v1/admin/audit${bad}`)).statusCode, bad).toBe(400)
    }
  })
})
