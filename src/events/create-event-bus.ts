import type { FastifyBaseLogger } from 'fastify'
import { connectNats } from '../nats/connect-nats.js'
import type { EventBus } from './event-bus.js'
import type { EventEnvelope } from './event-envelope.js'
import { InProcessEventBus } from './in-process-event-bus.js'
import { NatsEventBus } from './nats-event-bus.js'

/**
 * The one place that picks the event bus: NATS when `NATS_URL` is set, else in-process.
 * `isEvent` tells the events of the app (`src/fleet-event.ts`) from anything else on the subject.
 */
export async function createEventBus<E extends EventEnvelope>(
  natsUrl: string | undefined,
  log: FastifyBaseLogger,
  isEvent: (value: unknown) => value is E,
): Promise<EventBus<E>> {
  if (!natsUrl) return new InProcessEventBus<E>()
  return new NatsEventBus(await connectNats(natsUrl, 'fleetgate-events', { noEcho: true }), log, isEvent)
}
