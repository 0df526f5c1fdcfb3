import { Counter, Gauge, type Registry } from 'prom-client'
import { LeanHistogram } from '../metrics/lean-metrics.js'

export interface LinkMetrics {
  unknownResponses: Counter
  closes: Counter<'code'>
  /** Sockets closed at once on arrival, given no session: `capacity` (maxLinks), `awaiting` (maxAwaitingRegister), `awaiting_address` (maxAwaitingPerAddress), `restarting`. */
  refusals: Counter<'reason'>
  requestDuration: LeanHistogram<'route' | 'outcome'>
}

/** What the gauges read at scrape time rather than track on every request. */
export interface LinkCounts {
  linked(): number
  inFlight(): number
}

/** Device-link metrics on the app's registry. */
export function createLinkMetrics(registry: Registry, counts: LinkCounts): LinkMetrics {
  new Gauge({
    name: 'fleetgate_device_links',
    help: 'Registered device links held by this instance',
    registers: [registry],
    collect() {
      this.set(counts.linked())
    },
  })
  new Gauge({
    name: 'fleetgate_device_requests_in_flight',
    help: 'Requests sent to devices linked to this instance and not yet answered',
    registers: [registry],
    collect() {
      this.set(counts.inFlight())
    },
  })
  return {
    unknownResponses: new Counter({
      name: 'fleetgate_device_unknown_responses_total',
      help: 'Response frames whose id matched no pending request on their link (late or bogus)',
      registers: [registry],
    }),
    closes: new Counter({
      name: 'fleetgate_device_link_closes_total',
      help: 'Device links closed, by close code',
      labelNames: ['code'],
      registers: [registry],
    }),
    refusals: new Counter({
      name: 'fleetgate_device_link_refusals_total',
      help: 'Device link sockets closed on arrival (1013 or 1012) before any frame, by reason',
      labelNames: ['reason'],
      registers: [registry],
    }),
    requestDuration: new LeanHistogram({
      name: 'fleetgate_device_request_duration_seconds',
      help: 'Forwarded device requests by gateway route and outcome',
      labelNames: ['route', 'outcome'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
  }
}
