import type { Generated } from 'kysely'

/** Seconds of closed state intervals per SEMI E10 state, and the counts, of one machine over one hour or one UTC day. */
export interface ProductionRollup {
  device_id: string
  s_productive: number
  s_standby: number
  s_engineering: number
  s_scheduled_down: number
  s_unscheduled_down: number
  s_non_scheduled: number
  placed: number
  missed: number
  jobs_completed: number
  /** JSON text: `{"<fault>": count}`. */
  faults: string
  /** JSON text: `[{"feeder": name, "placed", "missed"}]`. */
  feeders: string
  /** JSON text: `[{"nozzle": name, "placed", "missed"}]`. */
  nozzles: string
}

/**
 * An hourly row's running totals: its machine's seconds per state, placed and missed from its
 * first figures through the end of the row's hour. A window's sums are the difference of two
 * rows. Pruning keeps each machine's newest pruned row, its own figures zeroed, as the base.
 */
export interface RunningTotals {
  run_s_productive: number
  run_s_standby: number
  run_s_engineering: number
  run_s_scheduled_down: number
  run_s_unscheduled_down: number
  run_s_non_scheduled: number
  run_placed: number
  run_missed: number
}

/**
 * Production reporting (§16). Times are seconds since epoch (fractional) unless named otherwise.
 * The rollups hold only CLOSED state intervals; the open one, [since, now) of
 * `production_current`, is added at read time, and `offline` is what the six states leave of a
 * window.
 */
export interface ProductionTables {
  /** Raw events as accepted, once per (device_id, event_id); pruned after `PRODUCTION_RETENTION_DAYS`. */
  production_events: {
    device_id: string
    event_id: string
    ts: number
    /** `state`, `job_started`, `job_ended`, `placements` or `fault`. */
    kind: string
    /** `state` events: the SEMI E10 state. */
    state: string | null
    /** `state` events: the reason, if any. */
    reason: string | null
    /** `job_started`, `job_ended` and `placements` events naming a job. */
    job_id: string | null
    /** `placements` events. */
    placed: number | null
    missed: number | null
    /** JSON text: the event as accepted. */
    body: string
    /** Database clock when stored. */
    received_at: number
  }
  /**
   * Each machine's state sequence by `ts`: one row per `state` event, plus an `offline` row
   * (event_id null) where a link closed. A state lasts until the next row by (ts, event_id),
   * a null event_id sorting first.
   */
  production_states: {
    device_id: string
    ts: number
    state: string
    reason: string | null
    event_id: string | null
  }
  /** Per machine and UTC hour; `hour_start` is seconds, a multiple of 3600. Kept 2 years. */
  production_hourly: ProductionRollup & { hour_start: number } & RunningTotals
  /** The same per UTC day (`day_start` = midnight UTC in seconds), kept with the hourly rows. */
  production_daily: ProductionRollup & { day_start: number }
  /** Each machine's newest state row by ts: the open interval [since, now). */
  production_current: {
    device_id: string
    /** One of the six states, or `offline`. */
    state: string
    reason: string | null
    since: number
  }
  /** Jobs from `job_started` / `job_ended` (either may come first) and the placements naming them. Kept 2 years. */
  production_jobs: {
    device_id: string
    job_id: string
    order_id: string | null
    program: string | null
    started_at: number | null
    ended_at: number | null
    /** `completed`, `stopped` or `failed`; null until the job ended. */
    result: string | null
    boards_planned: number | null
    boards_done: number | null
    placed: Generated<number>
    missed: Generated<number>
  }
}
