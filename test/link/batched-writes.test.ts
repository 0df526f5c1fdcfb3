import { Socket } from 'node:net'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { DIALECTS } from '../helpers/dialects.js'
import { startGatewayApp, type GatewayApp } from '../gateway/helpers/gateway-app.js'
import { RawDevice } from '../gateway/helpers/raw-device.js'

type WriteMethod = (this: Socket, ...args: unknown[]) => void
const proto = Socket.prototype as unknown as Record<'_write' | '_writev', WriteMethod>
const originals = { _write: proto._write, _writev: proto._writev }

/** Counts the writes (one `_write` or `_writev` each) of the server's sockets on `port`: with inject, only device links. */
function countServerWrites(port: number): { count: number } {
  const counter = { count: 0 }
  for (const method of ['_write', '_writev'] as const) {
    const original = originals[method]
    proto[method] = function (this: Socket, ...args: unknown[]) {
      if (this.localPort === port) counter.count++
      original.apply(this, args)
    }
  }
  return counter
}

describe.each(DIALECTS)('device-link writes on %s', (dialect) => {
  let gw: GatewayApp
  let root: string
  beforeAll(async () => {
    gw = await startGatewayApp(dialect)
    root = await gw.auth('root')
  })
  afterAll(() => gw.close())
  afterEach(() => {
    Object.assign(proto, originals)
  })

  it('sends the six request frames of one overview in one write', async () => {
    const device = await RawDevice.link(gw.linkUrl, { device_id: 'pnp-batch' }, (frame) => ({ status: 200, data: { from: frame.path } }))
    const overview = () => gw.app.inject({ method: 'GET', url: '/api/v1/devices/pnp-batch/overview', headers: { authorization: root } })
    expect((await overview()).statusCode).toBe(200)

    const writes = countServerWrites(Number(new URL(gw.url).port))
    const res = await overview()
    expect(res.statusCode).toBe(200)
    expect(res.json().partial_errors ?? {}).toEqual({})
    // Unbatched, each of the six frames is its own write.
    expect(writes.count).toBeGreaterThanOrEqual(1)
    expect(writes.count).toBeLessThanOrEqual(2)
    await device.close()
  })
})
