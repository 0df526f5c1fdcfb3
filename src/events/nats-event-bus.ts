import type { FastifyBaseLogger } from 'fastify'
import type { NatsConnection, Subscription } from 'nats'
import { Counter, type Registry } from 'prom-client'
import { drainNats } from '../nats/connect-nats.js'
import { NatsConnectionWatch } from '../nats/connection-watch.js'
import type { BroadcastChannel, EventBus, EventListener } from './event-bus.js'
import type { EventEnvelope } from './event-envelope.js'
import { InProcessEventBus } from './in-process-event-bus.js'
import { withTimeout } from '../lib/time.js'
import { BusInterest, type BusInterestOptions } from './bus-interest.js'

/** An instance publishes here while another listens (see BusInterest), and subscribes here while it has listeners. */
export const EVENTS_SUBJECT = 'fleetgate.events'

/** Broadcast channels: `fleetgate.broadcast.<name>`, subscribed by every instance. */
export const BROADCAST_SUBJECT_PREFIX = 'fleetgate.broadcast.'

/** How long `listening` waits for the server to confirm the subscription. */
const LISTENING_WAIT_MS = 2000

const PUBLISHED_NAME = 'fleetgate_events_published_total'

/** Events raised on this instance, by where they went beyond its own streams. */
function publishedCounter(registry: Registry | undefined): Counter<'destination'> {
  const existing = registry?.getSingleMetric(PUBLISHED_NAME)
  if (existing) return existing as Counter<'destination'>
  return new Counter({
    name: PUBLISHED_NAME,
    help: 'Events raised on this instance, by destination: bus (sent on NATS: another instance has an open event stream, or this one started less than two announcement periods ago) or skipped (no other instance listens)',
    labelNames: ['destination'],
    registers: registry ? [registry] : [],
  })
}

export interface NatsEventBusOptions {
  /** Announcements of interest (period; tests shorten it). */
  interest?: BusInterestOptions
  /** Where `fleetgate_events_published_total` is counted. */
  registry?: Registry
}

/**
 * Several instances: an event is delivered to this instance's listeners at once and sent on
 * NATS for the others. The connection is opened with `noEcho`, so an instance never receives
 * its own events twice. The subject is subscribed only while this instance has a listener (an
 * open event stream): an instance without one is sent no events and parses none. And an event
 * is published only while another instance has a listener (`BusInterest`, which says why no
 * event is lost for an open stream): the heartbeats of a fleet nobody watches cost no message.
 */
export class NatsEventBus<E extends EventEnvelope> implements EventBus<E> {
  private readonly local = new InProcessEventBus<E>()
  private subscription: Subscription | undefined
  private listeners = 0
  /** Events received from the other instances (tests and metrics read it). */
  received = 0
  private readonly encoder = new TextEncoder()
  private readonly decoder = new TextDecoder()
  private readonly connection: NatsConnectionWatch
  private outgoing: { kind: string; data: Uint8Array }[] = []
  /**
   * Events raised during a turn of the event loop leave together at its end, in one write. Not
   * later: a client that saw an answer (say, a device added) and then acted on another instance
   * (its heartbeat) must see the events in that order on every stream; an event held back 20 ms
   * arrived after the next one raised elsewhere.
   */
  private sendTimer: NodeJS.Immediate | undefined
  private readonly channels: Subscription[] = []
  /** Which other instances listen. */
  readonly interest: BusInterest
  private readonly toBus: Counter.Internal
  private readonly skipped: Counter.Internal

  constructor(
    private readonly nc: NatsConnection,
    private readonly log: FastifyBaseLogger,
    /** Whether a message received is an event of ours (one of the kinds, with their data). */
    private readonly isEvent: (value: unknown) => value is E,
    options: NatsEventBusOptions = {},
  ) {
    this.connection = new NatsConnectionWatch(nc)
    this.interest = new BusInterest(nc, this.connection, log, options.interest)
    const published = publishedCounter(options.registry)
    this.toBus = published.labels({ destination: 'bus' })
    this.skipped = published.labels({ destination: 'skipped' })
  }

  publish(event: E): void {
    this.local.publish(event)
    // While NATS is down the client would buffer every event, without bound, and deliver them
    // late: the other instances' streams miss them instead (as after any reconnect of a stream).
    if (!this.connection.connected) return
    if (!this.interest.wanted) {
      this.skipped.inc()
      return
    }
    this.toBus.inc()
    this.outgoing.push({ kind: event.kind, data: this.encoder.encode(JSON.stringify(event)) })
    this.sendTimer ??= setImmediate(() => this.send())
  }

  /** Hands the waiting events to the client in one turn: it writes them to its socket at once. */
  private send(): void {
    this.sendTimer = undefined
    const events = this.outgoing
    this.outgoing = []
    if (!this.connection.connected) return
    for (const { kind, data } of events) {
      try {
        this.nc.publish(EVENTS_SUBJECT, data)
      } catch (err) {
        this.log.warn({ err, kind }, 'could not send an event to the other instances')
      }
    }
  }

  subscribe(listener: EventListener<E>): () => void {
    const unsubscribe = this.local.subscribe(listener)
    if (this.listeners++ === 0) {
      this.subscription = this.nc.subscribe(EVENTS_SUBJECT, { callback: (err, msg) => this.receive(err, msg.data) })
      // After the subscription, on the same connection: whoever reads it, the server has the subscription.
      this.interest.announce()
    }
    let subscribed = true
    return () => {
      if (!subscribed) return
      subscribed = false
      unsubscribe()
      if (--this.listeners === 0) {
        this.subscription?.unsubscribe()
        this.subscription = undefined
        this.interest.withdraw()
      }
    }
  }

  /**
   * Resolves once the server has the subscriptions (events and broadcast channels: a round
   * trip) and, with listeners, once every other instance acknowledged this one's interest (so
   * each publishes what it raises from now on: `BusInterest`); bounded while NATS is down or
   * an instance does not answer.
   */
  async listening(): Promise<void> {
    if ((!this.subscription && this.channels.length === 0) || !this.connection.connected) return
    await withTimeout(this.nc.flush(), LISTENING_WAIT_MS).catch(() => undefined)
    if (this.subscription) await this.interest.acknowledged()
  }

  /**
   * A channel on `fleetgate.broadcast.<name>`, on this bus's connection (signed with the cluster
   * key like every message; `noEcho`: an instance does not hear its own). While NATS is down a
   * message is dropped, not queued: what it says must also be found elsewhere (the database).
   */
  broadcast(name: string): BroadcastChannel {
    const subject = `${BROADCAST_SUBJECT_PREFIX}${name}`
    const listeners = new Set<(message: string) => void>()
    let subscribed = false
    return {
      send: async (message) => {
        if (!this.connection.connected) return
        try {
          this.nc.publish(subject, this.encoder.encode(message))
          await withTimeout(this.nc.flush(), LISTENING_WAIT_MS)
        } catch (err) {
          this.log.warn({ err, subject }, 'could not broadcast to the other instances')
        }
      },
      listen: (listener) => {
        listeners.add(listener)
        if (!subscribed) {
          subscribed = true
          this.channels.push(
            this.nc.subscribe(subject, {
              callback: (err, msg) => {
                if (err) return this.log.error({ err, subject }, 'NATS broadcast subscription failed')
                const message = this.decoder.decode(msg.data)
                for (const each of listeners) each(message)
              },
            }),
          )
        }
        return () => listeners.delete(listener)
      },
    }
  }

  async close(): Promise<void> {
    clearImmediate(this.sendTimer)
    this.send()
    for (const channel of this.channels.splice(0)) channel.unsubscribe()
    this.interest.close()
    this.subscription?.unsubscribe()
    this.subscription = undefined
    await this.local.close()
    await drainNats(this.nc)
  }

  private receive(err: Error | null, data: Uint8Array): void {
    if (err) return this.log.error({ err }, 'NATS event subscription failed')
    this.received++
    const event = this.decode(data)
    if (event) this.local.publish(event)
  }

  private decode(data: Uint8Array): E | undefined {
    try {
      const event: unknown = JSON.parse(this.decoder.decode(data))
      if (this.isEvent(event)) return event
    } catch {
      // Not ours: ignored.
    }
    this.log.warn('ignored a malformed message on the events subject')
    return undefined
  }
}
