import { Registry } from 'prom-client'
import { collectProcessMetrics } from './process-metrics.js'

/** One Prometheus registry per app, so every capability adds its own metrics to it. */
export interface Metrics {
  registry: Registry
}

export function createMetrics(): Metrics {
  const registry = new Registry()
  collectProcessMetrics(registry, 'fleetgate_')
  return { registry }
}
