/**
 * The figures of contract §16, computed from sums: one machine over a window, or a group of
 * machines. Pure arithmetic, no storage: the repository gathers the sums, this turns them into
 * what the API answers. Every ratio is `null` when its divisor is 0 or unknown, and none is
 * capped at 1 (a machine placing faster than its rating has a performance above 1).
 */

/** The six SEMI E10 states a machine reports, in the contract's order. */
export const E10_STATES = ['productive', 'standby', 'engineering', 'scheduled_down', 'unscheduled_down', 'non_scheduled'] as const
export type E10State = (typeof E10_STATES)[number]
/** Time in each state, and `offline` (before the first state event, after a link closes). */
export type StateSeconds = Record<E10State | 'offline', number>

export const isE10State = (state: string): state is E10State => (E10_STATES as readonly string[]).includes(state)

/** Seconds in each of the six states, all zero. */
export function zeroSix(): Record<E10State, number> {
  return { productive: 0, standby: 0, engineering: 0, scheduled_down: 0, unscheduled_down: 0, non_scheduled: 0 }
}

/** Seconds in each of the six states (their columns named `<prefix><state>`, numbers or numeric text) of a stored row. */
export function sixOf(row: Record<string, unknown>, prefix: 's_' | 'run_s_'): Record<E10State, number> {
  const six = zeroSix()
  const columns = COLUMNS[prefix]
  for (let i = 0; i < E10_STATES.length; i++) six[E10_STATES[i]!] = Number(row[columns[i]!] ?? 0)
  return six
}
const SEVEN = [...E10_STATES, 'offline'] as const
const COLUMNS = { s_: E10_STATES.map((s) => `s_${s}`), run_s_: E10_STATES.map((s) => `run_s_${s}`) }

/** Seconds in each of the six states, all zero, and offline zero. */
export function zeroSeconds(): StateSeconds {
  return { productive: 0, standby: 0, engineering: 0, scheduled_down: 0, unscheduled_down: 0, non_scheduled: 0, offline: 0 }
}

/**
 * `seconds` with `offline` filled in: offline time is stored nowhere, it is what the window's
 * span (its part before now) leaves after the six states. Never below 0.
 */
export function withOffline(six: Omit<StateSeconds, 'offline'> | StateSeconds, spanSeconds: number): StateSeconds {
  const known = E10_STATES.reduce((sum, state) => sum + six[state], 0)
  return { ...zeroSeconds(), ...six, offline: Math.max(0, spanSeconds - known) }
}

/** The ratios of §16. */
export interface Ratios {
  cph: number | null
  availability: number | null
  performance: number | null
  quality: number | null
  oee: number | null
}

const ratio = (numerator: number, divisor: number | null): number | null => (divisor === null || divisor === 0 ? null : numerator / divisor)

/** `planned` seconds: productive + standby + engineering + unscheduled_down (scheduled down and non-scheduled time are not planned). */
export function plannedSeconds(seconds: Omit<StateSeconds, 'offline'>): number {
  return seconds.productive + seconds.standby + seconds.engineering + seconds.unscheduled_down
}

/** `quality` = placed ÷ (placed + missed). */
export const quality = (placed: number, missed: number): number | null => ratio(placed, placed + missed)

/** `oee` = availability × performance × quality, `null` when any of the three is. */
export function oee(availability: number | null, performance: number | null, qualityRatio: number | null): number | null {
  return availability === null || performance === null || qualityRatio === null ? null : availability * performance * qualityRatio
}

/** One machine over a window: cph, availability, performance (cph ÷ rated_cph), quality, oee. */
export function machineRatios(sums: { seconds: Omit<StateSeconds, 'offline'>; placed: number; missed: number; rated_cph: number | null }): Ratios {
  const { seconds, placed, missed } = sums
  const cph = ratio(placed, seconds.productive / 3600)
  const availability = ratio(seconds.productive, plannedSeconds(seconds))
  const performance = cph === null ? null : ratio(cph, sums.rated_cph)
  const q = quality(placed, missed)
  return { cph, availability, performance, quality: q, oee: oee(availability, performance, q) }
}

/** A machine's sums as a group adds them up. */
export interface MachineSums {
  seconds: StateSeconds
  placed: number
  missed: number
  rated_cph: number | null
}

/** A group's sums and ratios (§16 fleet query). */
export interface GroupFigures extends Ratios {
  devices: number
  seconds: StateSeconds
  placed: number
  missed: number
}

/**
 * What a group's figures are computed from: its machines' sums. `rated_placed` and
 * `rated_seconds` (Σ rated_cph × productive seconds) cover only the machines that have a
 * `rated_cph`. The fleet query has the database add these up (production-repository.ts).
 */
export interface GroupSums {
  devices: number
  seconds: StateSeconds
  placed: number
  missed: number
  rated_placed: number
  rated_seconds: number
}

/** A group's sums from its machines' sums. */
export function sumGroup(members: readonly MachineSums[]): GroupSums {
  const sums: GroupSums = { devices: members.length, seconds: zeroSeconds(), placed: 0, missed: 0, rated_placed: 0, rated_seconds: 0 }
  for (const m of members) {
    for (const state of SEVEN) sums.seconds[state] += m.seconds[state]
    sums.placed += m.placed
    sums.missed += m.missed
    if (m.rated_cph !== null) {
      sums.rated_placed += m.placed
      sums.rated_seconds += m.rated_cph * m.seconds.productive
    }
  }
  return sums
}

/** Two groups' sums as one (the fleet's total from its groups). */
export function addGroupSums(a: GroupSums, b: GroupSums): GroupSums {
  const seconds = zeroSeconds()
  for (const state of SEVEN) seconds[state] = a.seconds[state] + b.seconds[state]
  return { devices: a.devices + b.devices, seconds, placed: a.placed + b.placed, missed: a.missed + b.missed, rated_placed: a.rated_placed + b.rated_placed, rated_seconds: a.rated_seconds + b.rated_seconds }
}

/**
 * A group of machines: seconds, placed and missed are summed; cph and availability come from
 * the sums; `performance` = Σ placed ÷ Σ (rated_cph × productive hours), both sums over the
 * machines that have a `rated_cph`; `oee` the product of the group's three ratios.
 */
export function groupFiguresOf(sums: GroupSums): GroupFigures {
  const { devices, seconds, placed, missed } = sums
  const cph = ratio(placed, seconds.productive / 3600)
  const availability = ratio(seconds.productive, plannedSeconds(seconds))
  const performance = ratio(sums.rated_placed, sums.rated_seconds / 3600)
  const q = quality(placed, missed)
  return { devices, seconds, placed, missed, cph, availability, performance, quality: q, oee: oee(availability, performance, q) }
}

/** Placed and missed of one feeder or nozzle. */
export interface PartCounts {
  name: string
  placed: number
  missed: number
}

/** `miss_rate` = missed ÷ (placed + missed), `null` when both are 0. */
export const missRate = (placed: number, missed: number): number | null => ratio(missed, placed + missed)

/**
 * Feeders or nozzles as the API lists them: counts of the same name added up, each with its
 * miss rate, sorted by miss rate then missed, both descending (a part without placements, whose
 * rate is `null`, comes last), then by name for a stable order.
 */
export function rankedParts<K extends 'feeder' | 'nozzle'>(key: K, parts: Iterable<PartCounts>): ({ [P in K]: string } & { placed: number; missed: number; miss_rate: number | null })[] {
  const summed = new Map<string, { placed: number; missed: number }>()
  for (const part of parts) {
    const sums = summed.get(part.name) ?? { placed: 0, missed: 0 }
    sums.placed += part.placed
    sums.missed += part.missed
    summed.set(part.name, sums)
  }
  const rows = [...summed].map(([name, sums]) => ({ name, ...sums, miss_rate: missRate(sums.placed, sums.missed) }))
  rows.sort((a, b) => (b.miss_rate ?? -1) - (a.miss_rate ?? -1) || b.missed - a.missed || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  return rows.map((row) => ({ [key]: row.name, placed: row.placed, missed: row.missed, miss_rate: row.miss_rate }) as { [P in K]: string } & { placed: number; missed: number; miss_rate: number | null })
}

/** Adds `{fault: count}` maps. */
export function addFaults(into: Record<string, number>, more: Record<string, number>): Record<string, number> {
  for (const [fault, count] of Object.entries(more)) into[fault] = (into[fault] ?? 0) + count
  return into
}
