import type { FastifyBaseLogger } from 'fastify'
import { connect } from 'nats'
import { ConfigError } from '../../config/config-error.js'
import type { ReadinessCheck } from '../../http/ops-routes.js'
import type { LinkRegistry } from '../link-registry.js'
import type { DeviceBus } from './device-bus.js'
import { InProcessDeviceBus } from './in-process-device-bus.js'
import { NatsDeviceBus } from './nats-device-bus.js'

export interface DeviceBusSetup {
  bus: DeviceBus
  /** Added to /readyz when the bus depends on a service. */
  readiness?: ReadinessCheck
}

const natsServers = (natsUrl: string) => natsUrl.split(',').map((s) => s.trim())

/** Checks that NATS answers, before anything is opened or created (a refusal names NATS_URL). */
export async function probeNats(natsUrl: string): Promise<void> {
  try {
    const nc = await connect({ servers: natsServers(natsUrl), name: 'fleetgate-probe', timeout: 5000, reconnect: false })
    await nc.close()
  } catch (err) {
    throw new ConfigError('NATS_URL', `NATS unreachable: ${(err as Error).message}`)
  }
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
  let nc
  try {
    nc = await connect({
      servers: natsServers(natsUrl),
      name: 'fleetgate',
      timeout: 5000,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 1000,
      // Otherwise every request builds an Error (stack trace) up front, just in case it times out.
      noAsyncTraces: true,
    })
  } catch (err) {
    throw new ConfigError('NATS_URL', `NATS unreachable: ${(err as Error).message}`)
  }
  const connection = nc
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
