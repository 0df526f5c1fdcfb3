import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DeviceRepository } from '../../src/gateway/devices/device-repository.js'
import { startGatewayApp, type GatewayApp } from '../gateway/helpers/gateway-app.js'
import { RawDevice, uniqueDeviceId } from '../gateway/helpers/raw-device.js'
import { DIALECTS } from '../helpers/dialects.js'

describe.each(DIALECTS)('the link fence check on %s', (dialect) => {
  let gw: GatewayApp
  beforeAll(async () => {
    gw = await startGatewayApp(dialect, {}, { deviceLink: { fenceCheckMs: 50 } })
  })
  afterAll(() => gw.close())

  it('closes a link with 4409 when another instance claimed its device and the announcement was lost, and no other link', async () => {
    const takenId = uniqueDeviceId()
    const keptId = uniqueDeviceId()
    const taken = await RawDevice.link(gw.linkUrl, { device_id: takenId })
    const kept = await RawDevice.link(gw.linkUrl, { device_id: keptId })
    // Another instance's claim, recorded in the database and never announced on the bus.
    const elsewhere = await new DeviceRepository(gw.storage).claim({ linkId: 'link-elsewhere', deviceId: takenId, hostname: 'h', ip: '10.0.0.9', version: '1' }, Date.now() / 1000, 'instance-elsewhere')
    expect(elsewhere).toBe(2)
    expect((await taken.closed).code).toBe(4409)
    expect(kept.socket.readyState).toBe(kept.socket.OPEN)
    await kept.close()
  })

  it('closes the link too when the other instance\'s link was already closed again, its record naming no holder', async () => {
    const deviceId = uniqueDeviceId()
    const stale = await RawDevice.link(gw.linkUrl, { device_id: deviceId })
    await gw.storage.db.transaction().execute(async (trx) => {
      const repository = new DeviceRepository({ ...gw.storage, db: trx })
      expect(await repository.claim({ linkId: 'link-gone', deviceId, hostname: 'h', ip: '10.0.0.9', version: '1' }, Date.now() / 1000, 'instance-elsewhere')).toBe(2)
      await trx.updateTable('devices').set({ link_instance: null, link_id: null }).where('device_id', '=', deviceId).execute()
    })
    expect((await stale.closed).code).toBe(4409)
  })
})
