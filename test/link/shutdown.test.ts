import { describe, expect, it } from 'vitest'
import { DIALECTS } from '../helpers/dialects.js'
import { startGatewayApp } from '../gateway/helpers/gateway-app.js'
import { RawDevice } from '../gateway/helpers/raw-device.js'

describe.each(DIALECTS)('shutdown on %s', (dialect) => {
  it('lets an in-flight request finish, then closes every link with 1012', async () => {
    const gw = await startGatewayApp(dialect)
    const busy = await RawDevice.link(gw.linkUrl, { device_id: 'pnp-busy-at-close' }, () => undefined)
    const idle = await RawDevice.link(gw.linkUrl, { device_id: 'pnp-idle-at-close' })
    const arrived = busy.nextRequest()
    const pending = gw.app.inject({ method: 'GET', url: '/api/v1/devices/pnp-busy-at-close/hardware/position', headers: { authorization: await gw.auth('root') } })
    const frame = await arrived
    const closing = gw.close()
    // The busy device answers after shutdown began: the answer still reaches the client.
    busy.respond(frame.id, 200, { x: 1 })
    expect((await pending).json()).toEqual({ success: true, status: 200, data: { x: 1 } })
    await closing
    expect((await busy.closed).code).toBe(1012)
    expect((await idle.closed).code).toBe(1012)
  })

  it('closes a link still waiting to register with 1012', async () => {
    const gw = await startGatewayApp(dialect)
    const waiting = await RawDevice.open(gw.linkUrl)
    await gw.close()
    expect((await waiting.closed).code).toBe(1012)
  })
})
