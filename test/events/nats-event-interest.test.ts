import { randomBytes } from 'node:crypto'
import net from 'node:net'
import { connect, type NatsConnection } from 'nats'
import { pino } from 'pino'
import { Registry } from 'prom-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { INTEREST_SUBJECT } from '../../src/events/bus-interest.js'
import { createEventBus } from '../../src/events/create-event-bus.js'
import { EVENTS_SUBJECT, type NatsEventBus } from '../../src/events/nats-event-bus.js'
import type { FleetEvent } from '../../src/fleet-event.js'
import { isFleetEvent } from '../../src/fleet-event.js'
import { BusSigner, signedConnection } from '../../src/nats/bus-signature.js'
import { machine } from '../gateway/helpers/machine.js'
import { RawDevice, uniqueDeviceId } from '../gateway/helpers/raw-device.js'
import { testDatabase, type TestDatabase } from '../helpers/dialects.js'
import { natsSuitesRunnable, TEST_NATS_URL } from '../helpers/nats.js'
import { startEventsApp, type EventsApp } from './events-kit.js'

const runnable = await natsSuitesRunnable({ needsPostgres: true })

/** Short announcement period: grace and lifetime (multiples of it) pass in a fraction of a second. */
const PERIOD_MS = 150

describe.skipIf(!runnable)('events go on NATS only while another instance listens', () => {
  // A key of this suite alone: what other suites sharing this NATS server announce (unsigned, or
  // with another key) is refused, so only these instances' interest counts.
  const KEY = randomBytes(32).toString('base64url')
  const log = pino({ level: 'silent' })
  const registryA = new Registry()
  let database: TestDatabase
  let busA: NatsEventBus<FleetEvent>
  let busB: NatsEventBus<FleetEvent>
  let a: EventsApp
  let b: EventsApp
  /** A plain client on the events subject: a listener for the NATS server, but one nobody announced. */
  let watcher: NatsConnection
  /** Events seen on the subject, by device id. */
  const onSubject = new Map<string, FleetEvent[]>()
  const links: RawDevice[] = []
  const bus = async (registry?: Registry) =>
    (await createEventBus({ url: TEST_NATS_URL, clusterKey: KEY }, log, isFleetEvent, registry, { periodMs: PERIOD_MS })) as NatsEventBus<FleetEvent>
  const published = async (destination: 'bus' | 'skipped') =>
    Number(new RegExp(`fleetgate_events_published_total\\{destination="${destination}"\\} (\\d+)`).exec(await registryA.metrics())?.[1] ?? 0)

  beforeAll(async () => {
    database = testDatabase('postgres')
    watcher = await connect({ servers: TEST_NATS_URL })
    watcher.subscribe(EVENTS_SUBJECT, {
      callback: (_err, msg) => {
        try {
          const event = JSON.parse(new TextDecoder().decode(msg.data)) as FleetEvent
          const id = (event.data as { device_id?: string }).device_id
          if (id) onSubject.set(id, [...(onSubject.get(id) ?? []), event])
        } catch {
          // Another suite's message.
        }
      },
    })
    await watcher.flush()
    busA = await bus(registryA)
    busB = await bus()
    const env = { NATS_URL: TEST_NATS_URL, CLUSTER_KEY: KEY }
    a = await startEventsApp('postgres', env, { database, eventBus: busA })
    b = await startEventsApp('postgres', env, { database, eventBus: busB })
    await Promise.all([busA.interest.learned(), busB.interest.learned()])
  })
  afterAll(async () => {
    for (const link of links) await link.close().catch(() => undefined)
    await a?.close()
    await b?.close()
    await watcher?.close()
    await database?.cleanup()
  })

  const status = (device_id: string, status: Record<string, unknown>): FleetEvent => ({ kind: 'device-status', data: { device_id, status, at: Date.now() / 1000 } })

  it('sends nothing on NATS for the heartbeats of devices nobody watches', async () => {
    const skippedBefore = await published('skipped')
    const sentBefore = await published('bus')
    const ids = Array.from({ length: 20 }, () => uniqueDeviceId())
    for (const id of ids) {
      const device = await RawDevice.link(a.linkUrl, { device_id: id }, machine)
      links.push(device)
      device.heartbeat({ quiet: true })
    }
    // Each device raises `device` (registered) and one `device-status`: 40 events, all kept on A.
    await expect.poll(() => published('skipped'), { timeout: 10_000 }).toBeGreaterThanOrEqual(skippedBefore + 2 * ids.length)
    expect(await published('bus')).toBe(sentBefore)

    // Now B listens: the next event of one of these devices goes on NATS, after anything A sent
    // earlier (one connection keeps its order), so the watcher has seen all A ever sent of them.
    const stream = await b.stream('root')
    busA.publish(status(ids[0]!, { marker: true }))
    await stream.next('device-status', (d) => d.device_id === ids[0])
    await expect.poll(() => onSubject.get(ids[0]!)?.length ?? 0).toBe(1)
    for (const id of ids.slice(1)) expect(onSubject.get(id)).toBeUndefined()
    stream.close()
    await expect.poll(() => busA.interest.wanted).toBe(false)
  })

  it('delivers to a stream on B the first event A raises right after the stream opened, every time', async () => {
    // A second publisher reads NATS late (what the server sends it is held 30 ms): had the
    // stream opened once B's announcement reached the server, rather than once every instance
    // acknowledged it, this one's first event would be kept back.
    const proxy = await delayingProxy(TEST_NATS_URL, 30)
    const slow = (await createEventBus({ url: proxy.url, clusterKey: KEY }, log, isFleetEvent, undefined, { periodMs: PERIOD_MS })) as NatsEventBus<FleetEvent>
    try {
      await slow.interest.learned()
      const id = uniqueDeviceId()
      for (let i = 0; i < 50; i++) {
        // Nobody listens, and A knows it: the stream's opening is what tells it.
        await expect.poll(() => [busA.interest.wanted, slow.interest.wanted]).toEqual([false, false])
        const stream = await b.stream('root')
        busA.publish(status(id, { i, from: 'a' }))
        slow.publish(status(id, { i, from: 'slow' }))
        for (const from of ['a', 'slow']) {
          expect((await stream.next('device-status', (d) => d.device_id === id && (d.status as { from: string }).from === from)).data.status).toEqual({ i, from })
        }
        stream.close()
      }
    } finally {
      await slow.close()
      await proxy.close()
    }
  })

  it('delivers to a stream on an instance just started the first event another raises right after it opened', async () => {
    const proxy = await delayingProxy(TEST_NATS_URL, 30)
    const slow = (await createEventBus({ url: proxy.url, clusterKey: KEY }, log, isFleetEvent, undefined, { periodMs: PERIOD_MS })) as NatsEventBus<FleetEvent>
    try {
      await slow.interest.learned()
      const id = uniqueDeviceId()
      for (let i = 0; i < 5; i++) {
        await expect.poll(() => slow.interest.wanted).toBe(false)
        // Its first listener subscribes before it heard from anyone: it waits for the answers to its "who listens?".
        const fresh = await bus()
        try {
          const received: FleetEvent[] = []
          fresh.subscribe((event) => received.push(event))
          await fresh.listening()
          slow.publish(status(id, { i }))
          await expect.poll(() => received.filter((e) => e.kind === 'device-status' && e.data.device_id === id).map((e) => e.data)).toMatchObject([{ status: { i } }])
        } finally {
          await fresh.close()
        }
      }
    } finally {
      await slow.close()
      await proxy.close()
    }
  })

  it('stops publishing once the stream on B closes', async () => {
    const stream = await b.stream('root')
    expect(busA.interest.interestedInstances()).toEqual([busB.interest.instance])
    stream.close()
    await expect.poll(() => busA.interest.wanted).toBe(false)
    const before = await published('skipped')
    busA.publish(status(uniqueDeviceId(), { after: 'close' }))
    expect(await published('skipped')).toBe(before + 1)
  })

  it('forgets the interest of an instance that stopped announcing (died) after the announcement lifetime', async () => {
    const raw = await connect({ servers: TEST_NATS_URL })
    try {
      const signed = signedConnection(raw, new BusSigner(KEY))
      signed.publish(INTEREST_SUBJECT, JSON.stringify({ instance: 'died-without-a-word', listeners: true }))
      await raw.flush()
      await expect.poll(() => busA.interest.interestedInstances()).toEqual(['died-without-a-word'])
      expect(busA.interest.wanted).toBe(true)
      // Never re-announced: forgotten after INTEREST_LIFETIME_PERIODS periods.
      await expect.poll(() => busA.interest.wanted).toBe(false)
      expect(busA.interest.interestedInstances()).toEqual([])
    } finally {
      await raw.close()
    }
  })

  it('refuses an unsigned announcement when the cluster key is set', async () => {
    const raw = await connect({ servers: TEST_NATS_URL })
    try {
      const signed = signedConnection(raw, new BusSigner(KEY))
      // One connection keeps its order: once the signed probe is in, the unsigned one before it was read.
      raw.publish(INTEREST_SUBJECT, JSON.stringify({ instance: 'unsigned-mallory', listeners: true }))
      signed.publish(INTEREST_SUBJECT, JSON.stringify({ instance: 'signed-probe', listeners: true }))
      await raw.flush()
      await expect.poll(() => busA.interest.interestedInstances()).toContain('signed-probe')
      expect(busA.interest.interestedInstances()).not.toContain('unsigned-mallory')
      signed.publish(INTEREST_SUBJECT, JSON.stringify({ instance: 'signed-probe', listeners: false, gone: true }))
      await raw.flush()
      await expect.poll(() => busA.interest.wanted).toBe(false)
    } finally {
      await raw.close()
    }
  })

  it('lets a restarted instance learn the streams already open elsewhere, and reach them', async () => {
    const stream = await b.stream('root')
    const restarted = await bus()
    try {
      await restarted.interest.learned()
      expect(restarted.interest.interestedInstances()).toContain(busB.interest.instance)
      const id = uniqueDeviceId()
      restarted.publish(status(id, { from: 'restarted' }))
      expect((await stream.next('device-status', (d) => d.device_id === id)).data.status).toEqual({ from: 'restarted' })
    } finally {
      stream.close()
      await restarted.close()
    }
  })
})

/** A TCP proxy to the NATS server that holds what the server sends for `delayMs` (in order); the other way goes at once. */
async function delayingProxy(natsUrl: string, delayMs: number): Promise<{ url: string; close(): Promise<void> }> {
  const target = new URL(natsUrl)
  const sockets = new Set<net.Socket>()
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 4222), target.hostname)
    for (const socket of [client, upstream]) {
      sockets.add(socket)
      socket.on('error', () => undefined)
      socket.on('close', () => {
        client.destroy()
        upstream.destroy()
        sockets.delete(socket)
      })
    }
    client.pipe(upstream)
    // Timers of one duration fire in the order they were set: the bytes keep their order.
    upstream.on('data', (chunk) => setTimeout(() => client.destroyed || client.write(chunk), delayMs))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as net.AddressInfo
  return {
    url: `nats://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  }
}
