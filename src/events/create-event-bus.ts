import type { FastifyBaseLogger } from 'fastify'
import type { Registry } from 'prom-client'
import { busSigner, signedConnection } from '../nats/bus-signature.js'
import { asNatsSettings, connectNats, type NatsSettings } from '../nats/connect-nats.js'
import type { BusInterestOptions } from './bus-interest.js'
import type { EventBus } from './event-bus.js'
import type { EventEnvelope } from './event-envelope.js'
import { InProcessEventBus } from './in-process-event-bus.js'
import { NatsEventBus } from './nats-event-bus.js'

/**
 * The one place that picks the event bus: NATS when `NATS_URL` is set, else in-process.
 * `isEvent` tells the events of the app (`src/fleet-event.ts`) from anything else on the subject.
 * With a cluster key every event is signed, and one without a valid signature is ignored (counted in `metrics`).
 */
export async function createEventBus<E extends EventEnvelope>(
  nats: string | NatsSettings | undefined,
  log: FastifyBaseLogger,
  isEvent: (value: unknown) => value is E,
  metrics?: Registry,
  /** Announcements of which instances listen (`BusInterest`); tests shorten the period. */
  interest?: BusInterestOptions,
): Promise<EventBus<E>> {
  if (!nats) return new InProcessEventBus<E>()
  const settings = asNatsSettings(nats)
  const nc = await connectNats(settings, 'fleetgate-events', { noEcho: true })
  return new NatsEventBus(signedConnection(nc, busSigner(settings.clusterKey, metrics)), log, isEvent, {
    ...(metrics ? { registry: metrics } : {}),
    ...(interest ? { interest } : {}),
  })
}
