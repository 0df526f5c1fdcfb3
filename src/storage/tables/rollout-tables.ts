/** Firmware rollouts (contract §14). Times are seconds since epoch, fractional. */
export interface RolloutTables {
  rollouts: {
    rollout_id: string
    release_id: string
    display_version: string
    /** 'running' | 'paused' | 'completed' | 'aborted' */
    state: string
    /** 1 while running or paused, else NULL: a unique index allows one such rollout. */
    active_slot: number | null
    /** Index of the open stage. */
    stage: number
    /** JSON array of ascending percentages ending at 100. */
    stages: string
    max_failure_ratio: number
    soak_seconds: number
    targeted: number
    /** Stages from this index on pause the rollout when too many fail (a resume moves it past the open stage). */
    check_failures_from: number
    stage_opened_at: number
    /** When every machine of the open stage ended (the soak runs from here); NULL while some have not. */
    stage_ended_at: number | null
    /** JSON of the counts last announced in a `rollout` event, and when. */
    counts: string
    counts_at: number
    created_at: number
    created_by: string
    /** The selector the membership was resolved from (§15); null when created from a list of ids or every machine. */
    selector: string | null
    /** JSON `{max_miss_rate_increase, min_placements, wait_seconds}` (§16), or NULL: no KPI gate. */
    kpi_gate: string | null
    /** The KPI gate of the open stage once it ended: 'waiting' | 'passed' | 'regression'; NULL before (migration 0017). */
    gate_state: string | null
    /** Why a paused rollout is paused: 'manual' | 'failures' | 'kpi_regression'; NULL when not paused. */
    pause_reason: string | null
    updated_at: number
  }
  rollout_devices: {
    rollout_id: string
    device_id: string
    /** Place in the rollout's stable order (a hash of rollout id and device id). */
    position: number
    /** The stage whose opening targets this machine. */
    stage: number
    /** 'pending' | 'waiting' | 'offered' | 'downloading' | 'installing' | 'installed' | 'failed' */
    state: string
    progress: number | null
    error: string | null
    /** Set once an offer was sent: from then on the machine's reports count (on any of its links). */
    offered_at: number | null
    /** The offer's time, then each report's: the step time-out runs from here. */
    last_report_at: number | null
    /** The first report after the offer, NULL until then (an unanswered offer may have been lost with a link). */
    answered_at: number | null
    /** A waiting machine is not tried before this time (a try leases it until then). */
    next_try_at: number
    /** When the machine reported `installed` (database clock); the KPI gate compares its placements from then on. */
    installed_at: number | null
    updated_at: number
  }
  /** Machines per stage and state of each rollout, kept by every machine transition (migration 0013). */
  rollout_tallies: {
    rollout_id: string
    stage: number
    state: string
    n: number
  }
}
