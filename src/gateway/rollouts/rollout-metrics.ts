import { Counter, type Registry } from 'prom-client'

export interface RolloutMetrics {
  offers: Counter
  busy: Counter<'reason'>
  ignoredReports: Counter<'reason'>
  passFailures: Counter
}

export function createRolloutMetrics(registry: Registry): RolloutMetrics {
  return {
    offers: new Counter({ name: 'fleetgate_rollout_offers_total', help: 'Firmware offers sent to machines', registers: [registry] }),
    busy: new Counter({
      name: 'fleetgate_rollout_busy_total',
      help: 'Tries that ended without an offer: reason task (its task running or paused), no_answer (no answer to the task check) or declined (it declined the offer)',
      labelNames: ['reason'],
      registers: [registry],
    }),
    ignoredReports: new Counter({
      name: 'fleetgate_rollout_ignored_reports_total',
      help: 'firmware-status frames ignored: no offer of that rollout to the machine, or its install already ended',
      labelNames: ['reason'],
      registers: [registry],
    }),
    passFailures: new Counter({
      name: 'fleetgate_rollout_pass_failures_total',
      help: 'Rollout passes that failed (the database could not be reached, a decision could not commit): nothing of the failed decision is kept, the next pass decides again',
      registers: [registry],
    }),
  }
}
