import { Socket } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { DeviceAgent, ok, RouteTable } from '@fleetgate/device-agent'
import { FakeGateway } from './fake-gateway.js'

type WriteMethod = (this: Socket, ...args: unknown[]) => void
const proto = Socket.prototype as unknown as Record<'_write' | '_writev', WriteMethod>
const originals = { _write: proto._write, _writev: proto._writev }

/** Counts the writes (one `_write` or `_writev` each) of every socket connected to `port`. */
function countWritesTo(port: number): { count: number } {
  const counter = { count: 0 }
  for (const method of ['_write', '_writev'] as const) {
    const original = originals[method]
    proto[method] = function (this: Socket, ...args: unknown[]) {
      if (this.remotePort === port) counter.count++
      original.apply(this, args)
    }
  }
  return counter
}

describe('device agent writes', () => {
  let gateway: FakeGateway | undefined
  let agent: DeviceAgent | undefined
  afterEach(async () => {
    Object.assign(proto, originals)
    await agent?.close()
    await gateway?.close()
  })

  it('answers the requests that arrive in one turn with one write of its socket', async () => {
    gateway = await FakeGateway.start()
    const routes = new RouteTable().get('/n/:n', ({ params }) => ok({ n: params.n }))
    agent = new DeviceAgent({ url: gateway.url, deviceId: 'pnp-01', key: 'device-secret-0123456789', hostname: 'pnp-01', version: '1', routes, maxConcurrentRequests: 32 })
    void agent.start()
    const link = await gateway.nextLink()
    await link.acceptRegistration()
    await link.nextFrame('heartbeat')

    const writes = countWritesTo(Number(new URL(gateway.url).port))
    const ids = Array.from({ length: 20 }, (_, i) => `r${i}`)
    link.wire!.cork()
    for (const id of ids) link.request(id, 'GET', `/n/${id}`)
    link.wire!.uncork()
    const answers = await Promise.all(ids.map((id) => link.response(id)))
    expect(answers.map((a) => (a.data as { n: string }).n)).toEqual(ids)
    // Unbatched, each of the 20 answers is its own write.
    expect(writes.count).toBeGreaterThanOrEqual(1)
    expect(writes.count).toBeLessThanOrEqual(2)
  })
})
