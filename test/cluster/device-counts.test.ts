import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DIALECTS, testDatabase, type TestDatabase } from '../helpers/dialects.js'
import { natsReachable, TEST_NATS_URL } from '../helpers/nats.js'
import { startGatewayApp, type GatewayApp } from '../gateway/helpers/gateway-app.js'
import { RawDevice, uniqueDeviceId } from '../gateway/helpers/raw-device.js'

const runnable = DIALECTS.includes('postgres') && (await natsReachable('device counts across instances'))

describe.skipIf(!runnable)('device counts across three instances (PostgreSQL + NATS)', () => {
  let database: TestDatabase
  const instances: GatewayApp[] = []
  const devices: RawDevice[] = []
  const prefix = uniqueDeviceId('count')
  beforeAll(async () => {
    database = testDatabase('postgres')
    for (let i = 0; i < 3; i++) instances.push(await startGatewayApp('postgres', { NATS_URL: TEST_NATS_URL }, { database }))
  })
  afterAll(async () => {
    await Promise.all(devices.map((d) => d.close()))
    for (const gw of instances) await gw.close()
    await database?.cleanup()
  })

  const counts = async (gw: GatewayApp, query = '') =>
    (await gw.app.inject({ method: 'GET', url: `/api/v1/devices?limit=1&counts=true${query}`, headers: { authorization: await gw.auth('root') } })).json().counts

  it('counts on every instance the machines alive on all of them, one question per instance, and follows them leaving', async () => {
    // Machines a-0..a-3 and b-0..b-3, spread over the three instances.
    for (const group of ['a', 'b']) {
      for (let i = 0; i < 4; i++) devices.push(await RawDevice.link(instances[i % 3]!.linkUrl, { device_id: `${prefix}-${group}-${i}` }))
    }
    for (const gw of instances) {
      await expect.poll(() => counts(gw, `&prefix=${prefix}-`)).toEqual({ total: 8, online: 8 })
      expect(await counts(gw, `&prefix=${prefix}-a`)).toEqual({ total: 4, online: 4 })
    }
    // One machine on another instance than the asking one, and one on it, leave.
    await devices.splice(1, 1)[0]!.close()
    await devices.splice(2, 1)[0]!.close()
    for (const gw of instances) await expect.poll(() => counts(gw, `&prefix=${prefix}-`)).toEqual({ total: 8, online: 6 })
  })
})
