import type { FastifyPluginAsync } from 'fastify'
import type { AppDeps } from '../app-deps.js'
import { LoginThrottle } from '../auth/login-throttle.js'
import { natsSettings } from '../nats/connect-nats.js'
import { createDeviceBus } from '../link/bus/create-device-bus.js'
import { deviceLinkRoute } from '../link/device-link-route.js'
import { createLinkMetrics } from '../link/link-metrics.js'
import { linkDefaults, type DeviceLinkOptions } from '../link/link-options.js'
import { LinkRegistry } from '../link/link-registry.js'
import { LinkServer } from '../link/link-server.js'
import { StatusWriter } from '../link/status-writer.js'
import { ProductionIntake } from './production/ingest/production-intake.js'
import { createProductionMetrics } from './production/ingest/production-metrics.js'
import { ProductionStore } from './production/ingest/production-store.js'
import { DeviceClient } from './device-client.js'
import { adminRoutes } from './devices/admin-routes.js'
import { LabelRepository } from './labels/label-repository.js'
import { labelRoutes } from './labels/label-routes.js'
import { SelectorConditions } from './labels/selector-conditions.js'
import { BindingCache } from './devices/binding-cache.js'
import { BindingRepository } from './devices/binding-repository.js'
import { DeviceAccess } from './devices/device-access.js'
import { deviceLoginRoute } from './devices/device-login-route.js'
import { InstancePresence, PRESENCE_DEFAULTS, type InstancePresenceOptions } from './devices/instance-presence.js'
import { DeviceRepository } from './devices/device-repository.js'
import { LinkEvents } from './devices/link-events.js'
import { deviceRoutes } from './devices/device-routes.js'
import { overviewRoute } from './devices/overview-route.js'
import { forwardingRoutes } from './forwarding/forwarding-routes.js'
import type { GatewayContext } from './gateway-context.js'
import { createRollouts, ROLLOUT_DEFAULTS, type RolloutOptions } from './rollouts/create-rollouts.js'
import { rolloutRoutes } from './rollouts/rollout-routes.js'
import { ProductionReader } from './production/production-reader.js'
import { ProductionRepository } from './production/production-repository.js'
import { productionRoutes } from './production/production-routes.js'

export interface GatewayPluginOptions {
  deps: AppDeps
  /** Device-link timings (tests shorten them); the defaults are the contract's. */
  link?: DeviceLinkOptions
  rollouts?: RolloutOptions
  /** Instance liveness timings (tests shorten them). */
  presence?: InstancePresenceOptions
}

/** Gateway: device link, device registry and bindings, forwarding, overview, admin. */
export const gatewayPlugin: FastifyPluginAsync<GatewayPluginOptions> = async (app, { deps, link, rollouts: rolloutOptions, presence: presenceOptions }) => {
  const { config } = deps
  const options = { ...linkDefaults(), maxAwaitingPerAddress: config.deviceLinkMaxAwaitingPerAddress, ...link }
  const registry = new LinkRegistry()
  const { bus, bindingRemovals, readiness } = await createDeviceBus(natsSettings(config), registry, config.deviceAliveSeconds * 1000, deps.log, deps.instanceId, deps.metrics.registry)
  if (readiness) deps.readiness.push(readiness)
  // Runs after the device link's preClose closed every link, before the root closes storage.
  app.addHook('onClose', async () => {
    await bindingRemovals.close()
    await bus.close()
  })

  const metrics = createLinkMetrics(deps.metrics.registry, { linked: () => registry.size, inFlight: () => registry.inFlight() })
  const devices = new DeviceRepository(deps.storage)
  const bindings = new BindingRepository(deps.storage.db)
  const bindingCache = new BindingCache()
  bindingRemovals.watch(bindingCache)
  const writer = new StatusWriter(devices, options.statusFlushMs, deps.log)
  writer.start()
  const events = new LinkEvents(deps.events, registry, config.deviceAliveSeconds * 1000, deps.eventOptions.statusIntervalMs)
  const selectors = new SelectorConditions(deps.storage, config.deviceAliveSeconds)
  const rollouts = createRollouts(deps, registry, devices, selectors)
  const production = new ProductionIntake(new ProductionStore(deps.storage), createProductionMetrics(deps.metrics.registry), deps.events, deps.log)
  const server = new LinkServer({
    store: devices,
    bus,
    registry,
    writer,
    metrics,
    options,
    enrollToken: config.deviceEnrollToken,
    log: deps.log,
    events,
    firmwareStatus: (link, frame) => rollouts.reports.take(link, frame),
    production,
    // Shutdown order: no offer may go out on links that are about to close with 1012.
    beforeLinksClose: () => rollouts.engine.stop(),
  })
  server.start()
  const presence = new InstancePresence(deps.storage, deps.instanceId, registry, deps.events, (l) => events.registered(l, false), deps.log, {
    ...PRESENCE_DEFAULTS,
    ...presenceOptions,
  })
  presence.start()
  app.addHook('onClose', async () => presence.stop())
  registry.startPinging(options.pingIntervalMs)
  events.start(deps.eventOptions.sweepIntervalMs)
  app.addHook('onClose', async () => events.stop())
  rollouts.engine.start({ ...ROLLOUT_DEFAULTS, ...rolloutOptions }.passIntervalMs)
  // Before the root closes storage: no pass or report may still be writing.
  app.addHook('onClose', async () => {
    await rollouts.engine.stop()
    await rollouts.reports.settled()
    await production.settled()
  })

  const ctx: GatewayContext = {
    deps,
    devices,
    bindings,
    labels: new LabelRepository(deps.storage),
    access: new DeviceAccess(devices, bindings, bindingCache),
    bus,
    bindingRemovals,
    client: new DeviceClient(bus, metrics, config.deviceRequestTimeoutMs),
    deviceLoginThrottle: new LoginThrottle(deps.storage, 'device-login'),
  }
  await app.register(deviceLinkRoute, { server })
  await app.register(deviceRoutes, { ctx, selectors })
  await app.register(labelRoutes, { ctx, selectors })
  await app.register(overviewRoute, { ctx })
  await app.register(deviceLoginRoute, { ctx })
  await app.register(adminRoutes, { ctx })
  await app.register(forwardingRoutes, { ctx })
  await app.register(rolloutRoutes, { service: rollouts.service, repo: rollouts.repo })
  const productionReads = new ProductionRepository(deps.storage)
  await app.register(productionRoutes, { ctx, selectors, repo: productionReads, reader: new ProductionReader(productionReads, config.productionRetentionDays) })
}
