import type { FastifyBaseLogger } from 'fastify'
import { connect } from 'nats'
import { ConfigError } from '../config/config-error.js'
import type { EventBus } from './event-bus.js'
import { InProcessEventBus } from './in-process-event-bus.js'
import { NatsEventBus } from './nats-event-bus.js'

/** The one place that picks the event bus: NATS when `NATS_URL` is set, else in-process. */
export async function createEventBus(natsUrl: string | undefined, log: FastifyBaseLogger): Promise<EventBus> {
  if (!natsUrl) return new InProcessEventBus()
  try {
    const nc = await connect({
      servers: natsUrl.split(',').map((s) => s.trim()),
      name: 'fleetgate-events',
      noEcho: true,
      timeout: 5000,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 1000,
    })
    return new NatsEventBus(nc, log)
  } catch (err) {
    throw new ConfigError('NATS_URL', `NATS unreachable: ${(err as Error).message}`)
  }
}
