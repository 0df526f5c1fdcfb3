import { E10_STATES, addFaults, addGroupSums, groupFiguresOf, isE10State, machineRatios, rankedParts, sumGroup, withOffline, zeroSix, type E10State, type GroupFigures, type GroupSums, type PartCounts } from './production-figures.js'
import { DAILY, HOURLY, type CurrentState, type MachineScope, type ProductionRepository, type StateInterval } from './production-repository.js'
import { DAY, HOUR, planSeries, planWindow, type PlannedBucket, type Segment } from './window-plan.js'

/** What one machine did over a window or a bucket, before ratios. */
export interface Tally {
  six: Record<E10State, number>
  placed: number
  missed: number
  jobs_completed: number
  faults: Record<string, number>
  feeders: PartCounts[]
  nozzles: PartCounts[]
}

/** One machine's figures over a window (§16), without its id and window. */
export function machineFigures(tally: Tally, span: number, ratedCph: number | null) {
  const seconds = withOffline(tally.six, span)
  return {
    seconds,
    placed: tally.placed,
    missed: tally.missed,
    ...machineRatios({ seconds, placed: tally.placed, missed: tally.missed, rated_cph: ratedCph }),
    faults: tally.faults,
    feeders: rankedParts('feeder', tally.feeders),
    nozzles: rankedParts('nozzle', tally.nozzles),
    jobs_completed: tally.jobs_completed,
  }
}
export type MachineFigures = ReturnType<typeof machineFigures>

export type GroupBy = { kind: 'device' } | { kind: 'label'; key: string }
export interface FleetFigures {
  groups: (GroupFigures & { key: string | null })[]
  total: GroupFigures
}

const emptyTally = (): Tally => ({ six: zeroSix(), placed: 0, missed: 0, jobs_completed: 0, faults: {}, feeders: [], nozzles: [] })

/** Adjacent ranges joined: a 30-day hourly series reads one range, not 720. */
function mergedRanges(segments: readonly Segment[]): { start: number; end: number }[] {
  const sorted = [...segments].sort((a, b) => a.start - b.start)
  const merged: { start: number; end: number }[] = []
  for (const s of sorted) {
    const last = merged[merged.length - 1]
    if (last && s.start <= last.end) last.end = Math.max(last.end, s.end)
    else merged.push({ start: s.start, end: s.end })
  }
  return merged
}

const overlap = (aStart: number, aEnd: number, bStart: number, bEnd: number) => Math.max(0, Math.min(aEnd, bEnd) - Math.max(aStart, bStart))

function parseJson<T>(text: string, fallback: T): T {
  try {
    return (JSON.parse(text) as T) ?? fallback
  } catch {
    return fallback
  }
}

function partsOf(value: unknown, key: 'feeder' | 'nozzle'): PartCounts[] {
  if (!Array.isArray(value)) return []
  return value
    .filter((p): p is Record<string, unknown> => typeof p === 'object' && p !== null && typeof (p as Record<string, unknown>)[key] === 'string')
    .map((p) => ({ name: p[key] as string, placed: Number(p.placed) || 0, missed: Number(p.missed) || 0 }))
}

/** Adds the closed intervals' time inside [start, end) to `six`. */
function addIntervals(six: Record<E10State, number>, intervals: readonly StateInterval[], start: number, end: number): void {
  for (const interval of intervals) if (isE10State(interval.state)) six[interval.state] += overlap(interval.ts, interval.next_ts, start, end)
}

/** Adds the open interval [since, now) of the current state inside [start, end). */
function addOpen(six: Record<E10State, number>, current: CurrentState | undefined, start: number, end: number, now: number): void {
  if (current && isE10State(current.state)) six[current.state] += overlap(current.since, now, start, Math.min(end, now))
}

/**
 * Answers §16's figures: reads what each part of a window needs (window-plan.ts) and adds it up.
 * `rawSince` is how far back the raw events reach (now − PRODUCTION_RETENTION_DAYS).
 */
export class ProductionReader {
  constructor(
    private readonly repo: ProductionRepository,
    private readonly retentionDays: number,
  ) {}

  private rawSince(now: number): number {
    return now - this.retentionDays * DAY
  }

  /** One machine over [from, to): its part before now. */
  async machine(deviceId: string, ratedCph: number | null, from: number, to: number, now: number): Promise<MachineFigures> {
    const bucket = planWindow(from, Math.min(to, now), this.rawSince(now))
    const [tally] = await this.tallies(deviceId, [bucket], now)
    return machineFigures(tally!, bucket.span, ratedCph)
  }

  /** One machine in UTC-aligned buckets of an hour or a day; buckets after now are left out. */
  async series(deviceId: string, ratedCph: number | null, from: number, to: number, bucketSeconds: typeof HOUR | typeof DAY, now: number): Promise<(MachineFigures & { start: number })[]> {
    const buckets = planSeries(from, Math.min(to, now), bucketSeconds, this.rawSince(now))
    const tallies = await this.tallies(deviceId, buckets, now)
    return buckets.map((b, i) => ({ start: b.start, ...machineFigures(tallies[i]!, b.span, ratedCph) }))
  }

  /** Every bucket's tally of one machine: rollup rows in as few reads as the plan allows, raw edges, the open interval. */
  private async tallies(deviceId: string, buckets: readonly PlannedBucket[], now: number): Promise<Tally[]> {
    const scope: MachineScope = { deviceId }
    const tallies = buckets.map(() => emptyTally())
    const owner = { hour: new Map<number, number>(), day: new Map<number, number>() }
    const raw: { bucket: number; segment: Segment }[] = []
    buckets.forEach((b, i) => {
      for (const segment of b.segments) {
        if (segment.source === 'raw') raw.push({ bucket: i, segment })
        else for (let t = segment.start; t < segment.end; t += segment.source === 'hour' ? HOUR : DAY) owner[segment.source].set(t, i)
      }
    })
    const segmentsOf = (source: 'hour' | 'day') => buckets.flatMap((b) => b.segments.filter((s) => s.source === source))
    const [hourly, daily, current, rawParts] = await Promise.all([
      this.repo.rollupRows(HOURLY, scope, mergedRanges(segmentsOf('hour'))),
      this.repo.rollupRows(DAILY, scope, mergedRanges(segmentsOf('day'))),
      this.repo.currentStates(scope),
      Promise.all(raw.map(async ({ segment }) => {
        const [intervals, events] = await Promise.all([this.repo.stateIntervals(scope, segment), this.repo.events(deviceId, segment)])
        return { intervals, events }
      })),
    ])
    for (const [rows, owners] of [
      [hourly, owner.hour],
      [daily, owner.day],
    ] as const) {
      for (const row of rows) {
        const i = owners.get(row.start)
        if (i === undefined) continue
        const t = tallies[i]!
        for (const state of E10_STATES) t.six[state] += row.seconds[state]
        t.placed += row.placed
        t.missed += row.missed
        t.jobs_completed += row.jobs_completed
        addFaults(t.faults, parseJson<Record<string, number>>(row.faults, {}))
        t.feeders.push(...partsOf(parseJson<unknown>(row.feeders, []), 'feeder'))
        t.nozzles.push(...partsOf(parseJson<unknown>(row.nozzles, []), 'nozzle'))
      }
    }
    raw.forEach(({ bucket, segment }, k) => {
      const t = tallies[bucket]!
      const { intervals, events } = rawParts[k]!
      addIntervals(t.six, intervals, segment.start, segment.end)
      for (const event of events) {
        const body = parseJson<Record<string, unknown>>(event.body, {})
        if (event.kind === 'placements') {
          t.placed += event.placed ?? 0
          t.missed += event.missed ?? 0
          t.feeders.push(...partsOf(body.feeders, 'feeder'))
          t.nozzles.push(...partsOf(body.nozzles, 'nozzle'))
        } else if (event.kind === 'fault' && typeof body.fault === 'string') {
          t.faults[body.fault] = (t.faults[body.fault] ?? 0) + 1
        } else if (event.kind === 'job_ended' && body.result === 'completed') {
          t.jobs_completed += 1
        }
      }
    })
    buckets.forEach((b, i) => addOpen(tallies[i]!.six, current[0], b.covered.start, b.covered.end, now))
    return tallies
  }

  /** The scope's machines over [from, to), grouped (§16 fleet query); the database adds them up. */
  async fleet(scope: MachineScope, groupBy: GroupBy, from: number, to: number, now: number): Promise<FleetFigures> {
    const plan = planWindow(from, Math.min(to, now), this.rawSince(now))
    // The whole hours of a window are one range (raw edges only at its ends).
    const [whole, ...more] = mergedRanges(plan.segments.filter((s) => s.source !== 'raw'))
    if (more.length > 0) throw new Error(`window ${from}–${to}: its whole hours are not one range`)
    const raw = plan.segments.filter((s) => s.source === 'raw').map((s) => ({ start: s.start, end: s.end }))
    const groups = await this.repo.fleetGroups(scope, groupBy.kind === 'label' ? groupBy.key : undefined, { whole, raw, covered: plan.covered, now })
    groups.sort((a, b) => (a.key === null ? 1 : b.key === null ? -1 : a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    const total = groups.reduce<GroupSums>(addGroupSums, sumGroup([]))
    return { groups: groups.map(({ key, ...sums }) => ({ key, ...groupFiguresOf(sums) })), total: groupFiguresOf(total) }
  }
}
