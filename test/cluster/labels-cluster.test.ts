import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DIALECTS, testDatabase, type TestDatabase } from '../helpers/dialects.js'
import { natsReachable, TEST_NATS_URL } from '../helpers/nats.js'
import { startGatewayApp, type GatewayApp } from '../gateway/helpers/gateway-app.js'
import { RawDevice, uniqueDeviceId } from '../gateway/helpers/raw-device.js'

const runnable = DIALECTS.includes('postgres') && (await natsReachable('labels across instances'))

describe.skipIf(!runnable)('labels and selectors across three instances (PostgreSQL + NATS, §15)', () => {
  let database: TestDatabase
  const instances: GatewayApp[] = []
  const devices: RawDevice[] = []
  const prefix = uniqueDeviceId('lbl')
  const ids = Array.from({ length: 6 }, (_, i) => `${prefix}-${i}`)
  beforeAll(async () => {
    database = testDatabase('postgres')
    for (let i = 0; i < 3; i++) instances.push(await startGatewayApp('postgres', { NATS_URL: TEST_NATS_URL }, { database }))
    // Each instance holds two of the machines.
    for (const [i, id] of ids.entries()) devices.push(await RawDevice.link(instances[i % 3]!.linkUrl, { device_id: id }))
  })
  afterAll(async () => {
    await Promise.all(devices.map((d) => d.close()))
    for (const gw of instances) await gw.close()
    await database?.cleanup()
  })

  const call = async (gw: GatewayApp, method: string, url: string, payload?: object) =>
    gw.app.inject({ method: method as 'GET', url, headers: { authorization: await gw.auth('root') }, ...(payload ? { payload } : {}) })
  const matching = async (gw: GatewayApp, selector: string) =>
    (await call(gw, 'GET', `/api/v1/devices?prefix=${prefix}-&counts=true&selector=${encodeURIComponent(selector)}`)).json() as {
      devices: { device_id: string; labels: Record<string, string> }[]
      counts: { total: number; online: number }
    }

  it('sees on every instance the labels any of them wrote, and selects by them with live counts', async () => {
    const [a, b, c] = instances as [GatewayApp, GatewayApp, GatewayApp]
    expect((await call(a, 'PUT', `/api/v1/admin/devices/${ids[0]}/labels`, { labels: { site: 'sz', line: 'l1' } })).statusCode).toBe(200)
    const bulk = await call(b, 'POST', '/api/v1/admin/devices/labels', { devices: ids.slice(1, 4), set: { site: 'sz', line: 'l2' } })
    expect(bulk.json()).toEqual({ success: true, matched: 3, changed: 3 })
    expect((await call(c, 'PATCH', `/api/v1/admin/devices/${ids[3]}/labels`, { labels: { line: null, retired: '' } })).statusCode).toBe(200)
    for (const gw of instances) {
      const { devices: found, counts } = await matching(gw, 'site=sz,!retired')
      expect(found.map((d) => d.device_id)).toEqual(ids.slice(0, 3))
      expect(found[0]!.labels).toEqual({ line: 'l1', site: 'sz' })
      expect(counts).toEqual({ total: 3, online: 3 })
      expect((await matching(gw, 'line notin (l1)')).devices.map((d) => d.device_id)).toEqual(ids.slice(1))
    }
    // A machine of the selection leaves: every instance counts it offline, and `@online` follows.
    await devices[1]!.close()
    for (const gw of instances) {
      await expect.poll(async () => (await matching(gw, 'site=sz,!retired')).counts).toEqual({ total: 3, online: 2 })
      await expect.poll(async () => (await matching(gw, '@online=false')).devices.map((d) => d.device_id)).toEqual([ids[1]])
    }
  })
})
