import type { FastifyBaseLogger } from 'fastify'
import { connectNats } from '../nats/connect-nats.js'
import type { EventBus } from './event-bus.js'
import { InProcessEventBus } from './in-process-event-bus.js'
import { NatsEventBus } from './nats-event-bus.js'

/** The one place that picks the event bus: NATS when `NATS_URL` is set, else in-process. */
export async function createEventBus(natsUrl: string | undefined, log: FastifyBaseLogger): Promise<EventBus> {
  if (!natsUrl) return new InProcessEventBus()
  return new NatsEventBus(await connectNats(natsUrl, 'fleetgate-events', { noEcho: true }), log)
}
