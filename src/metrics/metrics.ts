import { Registry, collectDefaultMetrics } from 'prom-client'

/** One Prometheus registry per app, so every capability adds its own metrics to it. */
export interface Metrics {
  registry: Registry
}

export function createMetrics(): Metrics {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry, prefix: 'fleetgate_' })
  // prom-client names these gauges `*_total`, which Prometheus reserves for counters
  // (`promtool check metrics` refuses them).
  for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) {
    registry.removeSingleMetric(`fleetgate_${name}`)
  }
  return { registry }
}
