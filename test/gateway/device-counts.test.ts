import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DIALECTS } from '../helpers/dialects.js'
import { startGatewayApp, type GatewayApp } from './helpers/gateway-app.js'
import { RawDevice } from './helpers/raw-device.js'

describe.each(DIALECTS)('device counts over several pages of linked machines on %s', (dialect) => {
  let gw: GatewayApp
  const devices: RawDevice[] = []
  beforeAll(async () => {
    gw = await startGatewayApp(dialect)
  })
  afterAll(async () => {
    await Promise.all(devices.map((d) => d.close()))
    await gw.close()
  })

  const counts = async () =>
    (await gw.app.inject({ method: 'GET', url: '/api/v1/devices?limit=1&counts=true', headers: { authorization: await gw.auth('root') } })).json().counts as { total: number; online: number }

  it('counts every machine alive across more than two pages of 1,000, and drops the ones that leave', async () => {
    // 300 at a time from 3 addresses: at most 100 links await registration per address (the default limit).
    for (let i = 0; i < 2100; i += 300) {
      const batch = Array.from({ length: Math.min(300, 2100 - i) }, (_, k) =>
        RawDevice.link(gw.linkUrl, { device_id: `pnp-count-${String(i + k).padStart(4, '0')}` }, undefined, { localAddress: `127.0.0.${1 + (k % 3)}` }),
      )
      devices.push(...(await Promise.all(batch)))
    }
    expect(await counts()).toEqual({ total: 2100, online: 2100 })
    await Promise.all(devices.splice(0, 150).map((d) => d.close()))
    await expect.poll(counts).toEqual({ total: 2100, online: 1950 })
  }, 60_000)
})
