import type { FastifyPluginAsync } from 'fastify'
import type { AppDeps } from '../app-deps.js'
import { commandAdminRoutes } from './admin/command-admin-routes.js'
import { deviceAdminRoutes } from './admin/device-admin-routes.js'
import { logAdminRoutes } from './admin/log-admin-routes.js'
import { metaRoutes } from './admin/meta-routes.js'
import { bindRoutes } from './binding/bind-routes.js'
import { commandRoutes } from './device-api/command-routes.js'
import { configRoutes } from './device-api/config-routes.js'
import { heartbeatRoutes } from './device-api/heartbeat-routes.js'
import { logRoutes } from './device-api/log-routes.js'
import { otaRoutes } from './device-api/ota-routes.js'
import { telemetryRoutes } from './device-api/telemetry-routes.js'
import { timeRoutes } from './device-api/time-routes.js'
import { createPlatformServices } from './platform-services.js'
import { PlatformSweep } from './platform-sweep.js'
import { RetentionJob } from './retention/retention-job.js'

/** Advisory lock name: one retention pass at a time across instances. */
export const RETENTION_LOCK = 'fleetgate.retention'

/**
 * IoT platform: device API (/v1, /svc) and admin console API (/api/admin). Deliberately not
 * wrapped in fastify-plugin: its onClose (stopping retention) runs before the root one that
 * closes storage.
 */
export const platformPlugin: FastifyPluginAsync<{ deps: AppDeps }> = async (app, { deps }) => {
  const services = createPlatformServices(deps)

  for (const routes of [heartbeatRoutes, telemetryRoutes, commandRoutes, configRoutes, logRoutes, timeRoutes, otaRoutes, bindRoutes]) {
    await app.register(routes, { services })
  }
  for (const routes of [metaRoutes, deviceAdminRoutes, commandAdminRoutes, logAdminRoutes]) {
    await app.register(routes, { services })
  }

  const { telemetryRetentionDays, logRetentionDays } = deps.config
  const { db, telemetry, commands } = services
  const exclusive = <T>(fn: () => Promise<T>) => deps.storage.exclusive(RETENTION_LOCK, fn)
  const retention = new RetentionJob(
    { db, telemetry, commands, telemetryRetentionDays, logRetentionDays, exclusive, clock: deps.storage.clock, production: deps.pruneProduction },
    deps.log,
  )
  app.addHook('onReady', async () => retention.start())
  app.addHook('onClose', async () => retention.stop())

  // Offline devices and command expiry are announced within one sweep interval (contract §11).
  const sweep = new PlatformSweep({ db, bus: deps.events, commands, offlineMs: deps.config.platformOfflineSeconds * 1000 }, deps.log)
  app.addHook('onReady', async () => sweep.start(deps.eventOptions.sweepIntervalMs))
  app.addHook('onClose', async () => sweep.stop())
}
