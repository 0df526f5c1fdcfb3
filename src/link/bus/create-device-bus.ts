import type { FastifyBaseLogger } from 'fastify'
import type { ReadinessCheck } from '../../http/ops-routes.js'
import { connectNats } from '../../nats/connect-nats.js'
import type { LinkRegistry } from '../link-registry.js'
import type { BindingRemovals } from './binding-removals.js'
import type { DeviceBus } from './device-bus.js'
import { InProcessBindingRemovals } from './in-process-binding-removals.js'
import { InProcessDeviceBus } from './in-process-device-bus.js'
import { NatsBindingRemovals } from './nats-binding-removals.js'
import { NatsDeviceBus } from './nats-device-bus.js'

export interface DeviceBusSetup {
  bus: DeviceBus
  /** Binding removals for every instance's binding cache; shares the bus's connection, so it closes first. */
  bindingRemovals: BindingRemovals
  /** Added to /readyz when the bus depends on a service. */
  readiness?: ReadinessCheck
}

/** The one place that picks the device bus (and its binding-removal channel): NATS when `NATS_URL` is set, else in-process. */
export async function createDeviceBus(
  natsUrl: string | undefined,
  registry: LinkRegistry,
  aliveMs: number,
  log: FastifyBaseLogger,
  instanceId: string,
): Promise<DeviceBusSetup> {
  if (!natsUrl) return { bus: new InProcessDeviceBus(registry, aliveMs, instanceId), bindingRemovals: new InProcessBindingRemovals() }
  // noAsyncTraces: otherwise every request builds an Error (stack trace) up front, just in case it times out.
  const connection = await connectNats(natsUrl, 'fleetgate', { noAsyncTraces: true })
  const bus = new NatsDeviceBus(connection, registry, aliveMs, log, instanceId)
  return {
    bus,
    bindingRemovals: new NatsBindingRemovals(connection, instanceId, log),
    readiness: {
      name: 'nats',
      async check() {
        // Not ready at once while the client reconnects (a flush would wait for the server's return).
        if (!bus.connected) throw new Error('NATS unreachable')
        await connection.flush()
      },
    },
  }
}
