import { Counter, type Registry } from 'prom-client'
import { LeanHistogram } from '../../../metrics/lean-metrics.js'

export interface ProductionMetrics {
  /** Events stored for the first time (a repeat is acknowledged, not counted). */
  accepted: Counter
  /** Events refused, with a reason in the acknowledgement. */
  rejected: Counter
  /** From a production frame's arrival to its acknowledgement. */
  ackLatency: LeanHistogram<never>
}

export function createProductionMetrics(registry: Registry): ProductionMetrics {
  return {
    accepted: new Counter({ name: 'fleetgate_production_events_accepted_total', help: 'Production events stored (repeats of stored ids not counted)', registers: [registry] }),
    rejected: new Counter({ name: 'fleetgate_production_events_rejected_total', help: 'Production events rejected (bad field, unknown kind, ts out of range)', registers: [registry] }),
    ackLatency: new LeanHistogram({
      name: 'fleetgate_production_ack_seconds',
      help: 'Production frames: arrival to production-ack (events durably stored)',
      labelNames: [],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
  }
}
