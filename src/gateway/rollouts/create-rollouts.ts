import type { AppDeps } from '../../app-deps.js'
import type { LinkRegistry } from '../../link/link-registry.js'
import type { SelectorConditions } from '../labels/selector-conditions.js'
import type { DeviceRepository } from '../devices/device-repository.js'
import { RolloutEngine } from './rollout-engine.js'
import { createRolloutMetrics } from './rollout-metrics.js'
import { RolloutOffers } from './rollout-offers.js'
import { RolloutReports } from './rollout-reports.js'
import { RolloutRepository } from './rollout-repository.js'
import { RolloutService } from './rollout-service.js'

export interface RolloutOptions {
  /** How often each instance drives the active rollout; the default keeps offers within 1 s of a stage opening. */
  passIntervalMs?: number
}

export const ROLLOUT_DEFAULTS: Required<RolloutOptions> = { passIntervalMs: 500 }

/** The rollouts' parts on one instance. */
export interface Rollouts {
  repo: RolloutRepository
  service: RolloutService
  /** Takes the machines' `firmware-status` frames (the link server hands them over). */
  reports: RolloutReports
  engine: RolloutEngine
}

/** Builds the rollouts of one instance: the offers go to the machines linked to `registry`. */
export function createRollouts(deps: AppDeps, registry: LinkRegistry, devices: DeviceRepository, selectors: SelectorConditions): Rollouts {
  const repo = new RolloutRepository(deps.storage.db, deps.storage.clock)
  const metrics = createRolloutMetrics(deps.metrics.registry)
  const machineChanged: (rolloutId: string, machine: Parameters<RolloutEngine['machineChanged']>[1]) => void = (rolloutId, machine) =>
    engine.machineChanged(rolloutId, machine)
  const offers = new RolloutOffers({
    repo,
    registry,
    instanceId: deps.instanceId,
    aliveMs: deps.config.deviceAliveSeconds * 1000,
    metrics,
    log: deps.log,
    changed: (rollout, machine) => machineChanged(rollout.rollout_id, machine),
  })
  const engine = new RolloutEngine({ db: deps.storage.db, repo, offers, events: deps.events, log: deps.log, metrics, stepTimeoutSeconds: deps.config.rolloutStepTimeoutSeconds })
  const reports = new RolloutReports({ repo, metrics, log: deps.log, changed: machineChanged })
  const service = new RolloutService({ db: deps.storage.db, repo, devices, engine, selectors, revokedReleases: deps.revokedReleases })
  return { repo, service, reports, engine }
}
