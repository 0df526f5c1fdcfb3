import type { ProductionEventInput } from '@fleetgate/device-agent'
import type { OrderItem } from '../machine/orders.js'
import type { Random } from './seeded-random.js'

/** How a machine placed in the hours before the simulator started (`fleetgate demo`). */
export interface ProductionHistoryOptions {
  /** Hours of history, ending at `endMs`. */
  hours: number
  /** End of the history, in milliseconds since epoch: no event is at or after it. */
  endMs: number
  /** Time to place one part. */
  placeMs: number
  /** The board every job places. */
  board: readonly OrderItem[]
  /** The feeder slot a part is picked from (`F1`–`F12`, `manual`). */
  feederOf: (component: string) => string
  /** Misses before one part from `feeder` is placed (the machine's miss model). */
  missesFor: (feeder: string) => number
  random: Random
  /** Nozzles on the head, used in turn. Default 4. */
  nozzles?: number
  /** One `placements` event per this much time with placements, per job. Default 10 minutes. */
  placementsEveryMs?: number
}

interface Counts {
  placed: number
  missed: number
}

/** Board transfer in and out of the machine between two boards of a job. */
const BOARD_TRANSFER_MS = 2_000

/**
 * A realistic production history as contract §16 events with their past `ts`, for a machine to
 * report as late events when it starts: jobs of an hour or two of boards each, a set-up
 * (`standby`, `setup`) before each, now and then a feeder running empty (`unscheduled_down`,
 * `parts_exhausted`, with its fault), and the placements aggregated per 10 minutes by feeder and
 * nozzle, each part missing as the machine's miss model says. Bounded: a few events per
 * 10 minutes (the live per-miss faults are left out: a pick error each is thousands of events).
 * Ends `standby` (`no_product`).
 */
export function productionHistory(options: ProductionHistoryOptions): ProductionEventInput[] {
  const { board, feederOf, missesFor, random } = options
  const nozzles = options.nozzles ?? 4
  const everyMs = options.placementsEveryMs ?? 600_000
  const endMs = options.endMs
  const boardMs = board.length * options.placeMs + BOARD_TRANSFER_MS
  const feeders = board.map((item) => feederOf(item.component))
  const events: ProductionEventInput[] = []
  const between = (min: number, max: number) => min + random() * (max - min)
  const state = (at: number, s: 'productive' | 'standby' | 'unscheduled_down', reason?: string) =>
    events.push({ kind: 'state', state: s, ...(reason !== undefined && { reason }), ts: at / 1000 })

  let t = endMs - options.hours * 3_600_000
  let jobs = 0
  for (;;) {
    const idleFrom = t
    state(t, 'standby', 'setup')
    t += between(8, 20) * 60_000
    const boardsPlanned = Math.round(between(60, 150) * 60_000 / boardMs)
    // A feeder may run empty once in the job: the line waits minutes for a refill.
    const stopMs = random() < 0.4 ? between(3, 8) * 60_000 : 0
    // The job, its stop included, ends a minute before the end at the latest: nothing lies ahead of now.
    const boardsFitting = Math.floor((endMs - 60_000 - t - stopMs) / boardMs)
    if (boardsFitting < 1) {
      // The set-up that does not lead to a job before the end is idle time.
      events.pop()
      state(idleFrom, 'standby', 'no_product')
      break
    }
    const boards = Math.min(boardsPlanned, boardsFitting)
    const jobId = `history-${jobs + 1}-${Math.round(t).toString(36)}`
    jobs++
    events.push({ kind: 'job_started', job_id: jobId, program: `demo-board rev ${1 + (jobs % 3)}`, boards_planned: boards, ts: t / 1000 })
    state(t, 'productive')
    const starveAfter = stopMs > 0 ? Math.floor(between(0.2, 0.8) * boards) : -1
    let window: { endsAt: number; lastAt: number; counts: Counts; feeders: Map<string, Counts>; nozzles: Map<string, Counts> } | undefined
    const flush = () => {
      if (!window) return
      const w = window
      window = undefined
      events.push({
        kind: 'placements',
        placed: w.counts.placed,
        missed: w.counts.missed,
        job_id: jobId,
        feeders: [...w.feeders].map(([feeder, c]) => ({ feeder, ...c })),
        nozzles: [...w.nozzles].map(([nozzle, c]) => ({ nozzle, ...c })),
        ts: w.lastAt / 1000,
      })
    }
    for (let b = 0; b < boards; b++) {
      if (b === starveAfter) {
        flush()
        const feeder = feeders[Math.floor(random() * feeders.length)]!
        const part = board[feeders.indexOf(feeder)]!.component
        events.push({ kind: 'fault', fault: 'parts_exhausted', feeder, part, ts: t / 1000 })
        state(t, 'unscheduled_down', 'parts_exhausted')
        t += stopMs
        state(t, 'productive')
      }
      t += boardMs
      const endsAt = (Math.floor(t / everyMs) + 1) * everyMs
      if (window && window.endsAt !== endsAt) flush()
      window ??= { endsAt, lastAt: t, counts: { placed: 0, missed: 0 }, feeders: new Map(), nozzles: new Map() }
      window.lastAt = t
      board.forEach((_item, i) => {
        const missed = missesFor(feeders[i]!)
        window!.counts.placed++
        window!.counts.missed += missed
        add(window!.feeders, feeders[i]!, missed)
        add(window!.nozzles, `N${(i % nozzles) + 1}`, missed)
      })
    }
    flush()
    events.push({ kind: 'job_ended', job_id: jobId, result: 'completed', boards_done: boards, ts: t / 1000 })
  }
  return events
}

function add(counts: Map<string, Counts>, name: string, missed: number): void {
  const entry = counts.get(name) ?? { placed: 0, missed: 0 }
  entry.placed++
  entry.missed += missed
  counts.set(name, entry)
}
