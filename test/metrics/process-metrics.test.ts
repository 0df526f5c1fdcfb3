import { readdirSync } from 'node:fs'
import { createServer, connect, type Server, type Socket } from 'node:net'
import { once } from 'node:events'
import { afterEach, describe, expect, it } from 'vitest'
import { createMetrics } from '../../src/metrics/metrics.js'
import { openDescriptors } from '../../src/metrics/process-metrics.js'

const gauge = (text: string, name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1])
const listed = () => readdirSync('/proc/self/fd').length - 1

describe('process metrics', () => {
  const sockets: Socket[] = []
  let server: Server | undefined

  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.destroy()
    if (server) await new Promise((resolve) => server!.close(resolve))
    server = undefined
  })

  /** Opens `pairs` loopback connections: two descriptors each, plus the listening socket. */
  async function openPairs(pairs: number): Promise<void> {
    let accepted = 0
    const allAccepted = new Promise<void>((resolve) => {
      server = createServer((socket) => {
        sockets.push(socket)
        if (++accepted === pairs) resolve()
      }).listen(0, '127.0.0.1')
    })
    await once(server!, 'listening')
    const { port } = server!.address() as { port: number }
    for (let i = 0; i < pairs; i++) {
      const socket = connect(port, '127.0.0.1')
      sockets.push(socket)
      await once(socket, 'connect')
    }
    await allAccepted
  }

  it('count the open descriptors as the kernel lists them', async () => {
    expect(await openDescriptors()).toBe(listed())
    await openPairs(20)
    expect(await openDescriptors()).toBe(listed())
  })

  it('follow sockets opening in fleetgate_process_open_fds', async () => {
    const { registry } = createMetrics()
    const before = gauge(await registry.metrics(), 'fleetgate_process_open_fds')
    expect(before).toBeGreaterThan(2)
    await openPairs(20)
    expect(gauge(await registry.metrics(), 'fleetgate_process_open_fds') - before).toBe(41)
  })

  it('count sockets by resource type through the public API, and leave out the handles gauge built on a private one', async () => {
    const { registry } = createMetrics()
    await openPairs(5)
    const text = await registry.metrics()
    expect(Number(/^fleetgate_nodejs_active_resources\{type="TCPSocketWrap"\} (\d+)$/m.exec(text)?.[1])).toBeGreaterThanOrEqual(10)
    expect(text).not.toContain('fleetgate_nodejs_active_handles')
    expect(text).toContain('# TYPE fleetgate_process_open_fds gauge')
  })
})
