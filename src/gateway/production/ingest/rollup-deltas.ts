import type { MachineState } from '@fleetgate/device-agent/protocol'

export const HOUR = 3600
export const DAY = 86_400

/** The rollup column holding the seconds of each SEMI E10 state. */
export const STATE_COLUMNS = {
  productive: 's_productive',
  standby: 's_standby',
  engineering: 's_engineering',
  scheduled_down: 's_scheduled_down',
  unscheduled_down: 's_unscheduled_down',
  non_scheduled: 's_non_scheduled',
} as const satisfies Record<MachineState, string>
export type StateColumn = (typeof STATE_COLUMNS)[MachineState]

/** What one frame changes in one hour or day of one machine: added to the stored row. */
export interface BucketDelta {
  seconds: Partial<Record<StateColumn, number>>
  placed: number
  missed: number
  jobsCompleted: number
  faults: Map<string, number>
  feeders: Map<string, { placed: number; missed: number }>
  nozzles: Map<string, { placed: number; missed: number }>
}

const emptyDelta = (): BucketDelta => ({ seconds: {}, placed: 0, missed: 0, jobsCompleted: 0, faults: new Map(), feeders: new Map(), nozzles: new Map() })

export const isMachineState = (state: string): state is MachineState => state in STATE_COLUMNS

/**
 * The changes one frame makes to a machine's hourly and daily rollups, gathered in memory so
 * each touched row is written once. Buckets are UTC: hours at multiples of 3600 s, days at
 * midnight.
 */
export class RollupDeltas {
  readonly hourly = new Map<number, BucketDelta>()
  readonly daily = new Map<number, BucketDelta>()

  get empty(): boolean {
    return this.hourly.size === 0 && this.daily.size === 0
  }

  /**
   * Adds (`sign` 1) or takes away (-1) the closed interval [from, to) of `state`, cut at every
   * hour and day it spans. `offline` is never stored: it is what the six states leave of a window.
   */
  interval(state: string, from: number, to: number, sign: 1 | -1): void {
    if (!(to > from) || !isMachineState(state)) return
    const column = STATE_COLUMNS[state]
    for (const [buckets, size] of [
      [this.hourly, HOUR],
      [this.daily, DAY],
    ] as const) {
      for (let start = Math.floor(from / size) * size; start < to; start += size) {
        const seconds = Math.min(to, start + size) - Math.max(from, start)
        if (seconds <= 0) continue
        const delta = bucket(buckets, start)
        delta.seconds[column] = (delta.seconds[column] ?? 0) + sign * seconds
      }
    }
  }

  placements(ts: number, placed: number, missed: number, feeders: readonly { feeder: string; placed: number; missed: number }[] = [], nozzles: readonly { nozzle: string; placed: number; missed: number }[] = []): void {
    for (const delta of this.at(ts)) {
      delta.placed += placed
      delta.missed += missed
      for (const f of feeders) add(delta.feeders, f.feeder, f)
      for (const n of nozzles) add(delta.nozzles, n.nozzle, n)
    }
  }

  fault(ts: number, fault: string): void {
    for (const delta of this.at(ts)) delta.faults.set(fault, (delta.faults.get(fault) ?? 0) + 1)
  }

  jobCompleted(ts: number): void {
    for (const delta of this.at(ts)) delta.jobsCompleted++
  }

  private at(ts: number): [BucketDelta, BucketDelta] {
    return [bucket(this.hourly, Math.floor(ts / HOUR) * HOUR), bucket(this.daily, Math.floor(ts / DAY) * DAY)]
  }
}

function bucket(buckets: Map<number, BucketDelta>, start: number): BucketDelta {
  let delta = buckets.get(start)
  if (!delta) buckets.set(start, (delta = emptyDelta()))
  return delta
}

function add(counts: Map<string, { placed: number; missed: number }>, name: string, by: { placed: number; missed: number }): void {
  const count = counts.get(name)
  if (count) {
    count.placed += by.placed
    count.missed += by.missed
  } else counts.set(name, { placed: by.placed, missed: by.missed })
}
