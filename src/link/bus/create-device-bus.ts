import type { FastifyBaseLogger } from 'fastify'
import type { ReadinessCheck } from '../../http/ops-routes.js'
import type { Registry } from 'prom-client'
import { busSigner, signedConnection } from '../../nats/bus-signature.js'
import { asNatsSettings, connectNats, type NatsSettings } from '../../nats/connect-nats.js'
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

/**
 * The one place that picks the device bus (and its binding-removal channel): NATS when `NATS_URL` is set, else in-process.
 * With a cluster key every message on the connection is signed and checked (refusals counted in `metrics`).
 */
export async function createDeviceBus(
  nats: string | NatsSettings | undefined,
  registry: LinkRegistry,
  aliveMs: number,
  log: FastifyBaseLogger,
  instanceId: string,
  metrics?: Registry,
): Promise<DeviceBusSetup> {
  if (!nats) return { bus: new InProcessDeviceBus(registry, aliveMs, instanceId), bindingRemovals: new InProcessBindingRemovals() }
  const settings = asNatsSettings(nats)
  // noAsyncTraces: otherwise every request builds an Error (stack trace) up front, just in case it times out.
  const connection = signedConnection(await connectNats(settings, 'fleetgate', { noAsyncTraces: true }), busSigner(settings.clusterKey, metrics))
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
