import { once } from 'node:events'
import type { Socket } from 'node:net'
import { Registry } from 'prom-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { DeviceLink } from '../../src/link/device-link.js'
import { createLinkMetrics } from '../../src/link/link-metrics.js'
import { startSocketServer, type SocketServer } from './helpers/socket-server.js'

const metrics = createLinkMetrics(new Registry(), { linked: () => 0, inFlight: () => 0 })
const ALIVE_MS = 60_000
/** As the ping watch's `heardSince`: whatever the device sent, it counts as not heard from. */
const NOTHING_HEARD = Number.POSITIVE_INFINITY

describe('the ping watch of a device link', () => {
  let server: SocketServer
  const accepted: { socket: WebSocket; wire: Socket }[] = []
  beforeAll(async () => {
    server = await startSocketServer((socket, wire) => accepted.push({ socket, wire }))
  })
  afterAll(() => server.close())

  /** A link whose device answers pings only when the test says so, counting the pings it got. */
  async function linkToManualDevice() {
    const before = accepted.length
    const device = new WebSocket(server.url, { autoPong: false })
    const closed = once(device, 'close').then(([code]) => code as number)
    await once(device, 'open')
    await expect.poll(() => accepted.length).toBe(before + 1)
    const { socket, wire } = accepted[before]!
    const link = new DeviceLink({ linkId: 'l', deviceId: 'pnp-pings', hostname: 'h', ip: '127.0.0.1', version: '1' }, 1, socket, metrics, wire)
    // As the session does: a pong from the device reaches the link.
    socket.on('pong', () => link.pong())
    const pings = { count: 0 }
    device.on('ping', () => pings.count++)
    return { link, device, socket, closed, pings }
  }

  it('terminates the link on the period after two pings in a row went unanswered', async () => {
    const { link, device, closed, pings } = await linkToManualDevice()
    link.pingOrGiveUp(NOTHING_HEARD)
    link.pingOrGiveUp(NOTHING_HEARD)
    await expect.poll(() => pings.count).toBe(2)
    expect(device.readyState).toBe(WebSocket.OPEN)
    expect(link.isAlive(ALIVE_MS)).toBe(true)

    link.pingOrGiveUp(NOTHING_HEARD)
    expect(await closed).toBe(1006)
    expect(pings.count).toBe(2)
    expect(link.isAlive(ALIVE_MS)).toBe(false)
  })

  it('counts missed pings from zero again after a pong, so a device that answers is never terminated', async () => {
    const { link, device, socket, closed, pings } = await linkToManualDevice()
    link.pingOrGiveUp(NOTHING_HEARD)
    link.pingOrGiveUp(NOTHING_HEARD)
    await expect.poll(() => pings.count).toBe(2)
    device.pong()
    await once(socket, 'pong')

    link.pingOrGiveUp(NOTHING_HEARD)
    link.pingOrGiveUp(NOTHING_HEARD)
    await expect.poll(() => pings.count).toBe(4)
    expect(device.readyState).toBe(WebSocket.OPEN)

    // Two unanswered again since the pong: the next period gives up.
    link.pingOrGiveUp(NOTHING_HEARD)
    expect(await closed).toBe(1006)
    expect(pings.count).toBe(4)
  })

  it('does not ping a device heard from during the period, and pings it once it falls silent', async () => {
    const { link, device, pings } = await linkToManualDevice()
    const periodStart = Date.now()
    link.receive({ type: 'heartbeat', status: {} })
    link.pingOrGiveUp(periodStart)
    link.pingOrGiveUp(NOTHING_HEARD)
    // The server's frames arrive in order: once the answer to the device's own ping is in, every ping sent before it is too.
    device.ping()
    await once(device, 'pong')
    expect(pings.count).toBe(1)
    expect(device.readyState).toBe(WebSocket.OPEN)
  })

  it('terminates a device that heartbeats but leaves two pings in a row unanswered', async () => {
    const { link, closed, pings } = await linkToManualDevice()
    link.pingOrGiveUp(NOTHING_HEARD)
    await expect.poll(() => pings.count).toBe(1)
    const periodStart = Date.now()
    link.receive({ type: 'heartbeat', status: {} })
    link.pingOrGiveUp(periodStart)
    await expect.poll(() => pings.count).toBe(2)
    link.receive({ type: 'heartbeat', status: {} })
    link.pingOrGiveUp(periodStart)
    expect(await closed).toBe(1006)
  })
})
