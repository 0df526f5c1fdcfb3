import type { FastifyBaseLogger } from 'fastify'
import type { NatsConnection, Subscription } from 'nats'
import { drainNats } from '../nats/connect-nats.js'
import { NatsConnectionWatch } from '../nats/connection-watch.js'
import type { EventBus, EventListener } from './event-bus.js'
import type { EventEnvelope } from './event-envelope.js'
import { InProcessEventBus } from './in-process-event-bus.js'

/** Every instance publishes here and subscribes here. */
export const EVENTS_SUBJECT = 'fleetgate.events'

/**
 * Several instances: an event is delivered to this instance's listeners at once and sent on
 * NATS for the others. The connection is opened with `noEcho`, so an instance never receives
 * its own events twice.
 */
export class NatsEventBus<E extends EventEnvelope> implements EventBus<E> {
  private readonly local = new InProcessEventBus<E>()
  private readonly subscription: Subscription
  private readonly encoder = new TextEncoder()
  private readonly decoder = new TextDecoder()
  private readonly connection: NatsConnectionWatch

  constructor(
    private readonly nc: NatsConnection,
    private readonly log: FastifyBaseLogger,
    /** Whether a message received is an event of ours (one of the kinds, with their data). */
    private readonly isEvent: (value: unknown) => value is E,
  ) {
    this.connection = new NatsConnectionWatch(nc)
    this.subscription = nc.subscribe(EVENTS_SUBJECT, {
      callback: (err, msg) => {
        if (err) return this.log.error({ err }, 'NATS event subscription failed')
        const event = this.decode(msg.data)
        if (event) this.local.publish(event)
      },
    })
  }

  publish(event: E): void {
    this.local.publish(event)
    // While NATS is down the client would buffer every event, without bound, and deliver them
    // late: the other instances' streams miss them instead (as after any reconnect of a stream).
    if (!this.connection.connected) return
    try {
      this.nc.publish(EVENTS_SUBJECT, this.encoder.encode(JSON.stringify(event)))
    } catch (err) {
      this.log.warn({ err, kind: event.kind }, 'could not send an event to the other instances')
    }
  }

  subscribe(listener: EventListener<E>): () => void {
    return this.local.subscribe(listener)
  }

  async close(): Promise<void> {
    this.subscription.unsubscribe()
    await this.local.close()
    await drainNats(this.nc)
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
