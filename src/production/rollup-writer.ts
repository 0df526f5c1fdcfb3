import type { Db } from '../storage/storage.js'
import { STATE_COLUMNS, type BucketDelta, type RollupDeltas, type StateColumn } from './rollup-deltas.js'

const SECONDS_COLUMNS = Object.values(STATE_COLUMNS)
const ROLLUP_COLUMNS = [...SECONDS_COLUMNS, 'placed', 'missed', 'jobs_completed', 'faults', 'feeders', 'nozzles'] as const
/** Buckets per statement: 15 parameters a row, far below both engines' limits. */
const CHUNK = 200

interface RollupRow extends Record<StateColumn, number> {
  placed: number
  missed: number
  jobs_completed: number
  faults: string
  feeders: string
  nozzles: string
}

type Counts = { placed: number; missed: number }

/**
 * Adds a frame's deltas to the machine's hourly and daily rows (the caller holds the machine's
 * lock, in its transaction): the touched rows are read, the deltas added in memory (the JSON
 * columns merge by fault, feeder and nozzle) and written back with one upsert per table.
 */
export async function writeRollups(trx: Db, deviceId: string, deltas: RollupDeltas): Promise<void> {
  await writeTable(trx, 'production_hourly', 'hour_start', deviceId, deltas.hourly)
  await writeTable(trx, 'production_daily', 'day_start', deviceId, deltas.daily)
}

async function writeTable(trx: Db, table: 'production_hourly' | 'production_daily', start: 'hour_start' | 'day_start', deviceId: string, deltas: Map<number, BucketDelta>): Promise<void> {
  const starts = [...deltas.keys()].sort((a, b) => a - b)
  for (let i = 0; i < starts.length; i += CHUNK) {
    const chunk = starts.slice(i, i + CHUNK)
    const stored = new Map<number, RollupRow>()
    const rows = await trx
      .selectFrom(table)
      .select([...ROLLUP_COLUMNS, `${start} as start`] as never)
      .where('device_id', '=', deviceId)
      .where(start, 'in', chunk)
      .execute()
    for (const row of rows as unknown as (RollupRow & { start: number })[]) stored.set(Number(row.start), row)
    const values = chunk.map((bucket) => ({ device_id: deviceId, [start]: bucket, ...added(stored.get(bucket), deltas.get(bucket)!) }))
    await trx
      .insertInto(table)
      .values(values as never)
      .onConflict((oc) => oc.columns(['device_id', start] as never).doUpdateSet((eb) => Object.fromEntries(ROLLUP_COLUMNS.map((c) => [c, eb.ref(`excluded.${c}` as never)])) as never))
      .execute()
  }
}

function added(row: RollupRow | undefined, delta: BucketDelta): RollupRow {
  const out = {} as RollupRow
  for (const column of SECONDS_COLUMNS) out[column] = Number(row?.[column] ?? 0) + (delta.seconds[column] ?? 0)
  out.placed = Number(row?.placed ?? 0) + delta.placed
  out.missed = Number(row?.missed ?? 0) + delta.missed
  out.jobs_completed = Number(row?.jobs_completed ?? 0) + delta.jobsCompleted
  const faults = JSON.parse(row?.faults ?? '{}') as Record<string, number>
  for (const [fault, n] of delta.faults) faults[fault] = (faults[fault] ?? 0) + n
  out.faults = JSON.stringify(faults)
  out.feeders = mergeCounts(row?.feeders, 'feeder', delta.feeders)
  out.nozzles = mergeCounts(row?.nozzles, 'nozzle', delta.nozzles)
  return out
}

/** `[{<key>: name, placed, missed}]` with the delta's counts added, sorted by name. */
function mergeCounts(stored: string | undefined, key: 'feeder' | 'nozzle', delta: Map<string, Counts>): string {
  if (delta.size === 0 && stored !== undefined) return stored
  const counts = new Map<string, Counts>()
  for (const entry of JSON.parse(stored ?? '[]') as (Counts & Record<string, string>)[]) counts.set(entry[key]!, { placed: entry.placed, missed: entry.missed })
  for (const [name, by] of delta) {
    const count = counts.get(name)
    if (count) counts.set(name, { placed: count.placed + by.placed, missed: count.missed + by.missed })
    else counts.set(name, { ...by })
  }
  return JSON.stringify([...counts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([name, c]) => ({ [key]: name, placed: c.placed, missed: c.missed })))
}
