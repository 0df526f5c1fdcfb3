import type { FastifyBaseLogger } from 'fastify'
import type { ReadinessCheck } from '../../http/ops-routes.js'
import { connectNats } from '../../nats/connect-nats.js'
import type { LinkRegistry } from '../link-registry.js'
import type { DeviceBus } from './device-bus.js'
import { InProcessDeviceBus } from './in-process-device-bus.js'
import { NatsDeviceBus } from './nats-device-bus.js'

export interface DeviceBusSetup {
  bus: DeviceBus
  /** Added to /readyz when the bus depends on a service. */
  readiness?: ReadinessCheck
}

/** The one place that picks the device bus: NATS when `NATS_URL` is set, else in-process. */
export async function createDeviceBus(
  natsUrl: string | undefined,
  registry: LinkRegistry,
  aliveMs: number,
  log: FastifyBaseLogger,
  instanceId: string,
): Promise<DeviceBusSetup> {
  if (!natsUrl) return { bus: new InProcessDeviceBus(registry, aliveMs, instanceId) }
  // noAsyncTraces: otherwise every request builds an Error (stack trace) up front, just in case it times out.
  const connection = await connectNats(natsUrl, 'fleetgate', { noAsyncTraces: true })
  return {
    bus: new NatsDeviceBus(connection, registry, aliveMs, log, instanceId),
    readiness: {
      name: 'nats',
      async check() {
        if (connection.isClosed()) throw new Error('NATS connection closed')
        await connection.flush()
      },
    },
  }
}
