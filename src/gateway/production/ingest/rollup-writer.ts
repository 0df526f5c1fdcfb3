import { sql, type RawBuilder } from 'kysely'
import { MultiRowInsert } from '../../../storage/multi-row-insert.js'
import type { Db } from '../../../storage/storage.js'
import type { ProductionRollup } from '../../../storage/tables/production-tables.js'
import { STATE_COLUMNS, type BucketDelta, type RollupDeltas } from './rollup-deltas.js'

const SECONDS_COLUMNS = Object.values(STATE_COLUMNS)
const ROLLUP_COLUMNS = [...SECONDS_COLUMNS, 'placed', 'missed', 'jobs_completed', 'faults', 'feeders', 'nozzles'] as const
/** Buckets per statement: 15 parameters a row, far below both engines' limits. */
const CHUNK = 200

type RollupValues = Omit<ProductionRollup, 'device_id'>

type Counts = { placed: number; missed: number }
type Table = 'production_hourly' | 'production_daily'
type HourRow = { device_id: string; hour_start: number } & RollupValues
type DayRow = { device_id: string; day_start: number } & RollupValues

/**
 * Adds a group of frames' deltas to their machines' hourly and daily rows: the touched rows of
 * both tables are read in one statement, the deltas added in memory (the JSON columns merge by
 * fault, feeder and nozzle) and each table written back with one upsert, its text built once
 * and reused.
 */
export class RollupWriter {
  private readonly hourly: MultiRowInsert<HourRow>
  private readonly daily: MultiRowInsert<DayRow>

  constructor(db: Db) {
    const upsert = <R extends object>(table: Table, start: 'hour_start' | 'day_start') => (rows: R[]) =>
      db
        .insertInto(table)
        .values(rows as never)
        .onConflict((oc) => oc.columns(['device_id', start] as never).doUpdateSet((eb) => Object.fromEntries(ROLLUP_COLUMNS.map((c) => [c, eb.ref(`excluded.${c}` as never)])) as never))
    this.hourly = new MultiRowInsert<HourRow>(['device_id', 'hour_start', ...ROLLUP_COLUMNS], upsert('production_hourly', 'hour_start'), CHUNK)
    this.daily = new MultiRowInsert<DayRow>(['device_id', 'day_start', ...ROLLUP_COLUMNS], upsert('production_daily', 'day_start'), CHUNK)
  }

  /** Adds each machine's deltas (the caller holds their locks, in its transaction). */
  async write(trx: Db, deltas: Map<string, RollupDeltas>): Promise<void> {
    const touched = [...deltas].filter(([, d]) => !d.empty)
    if (touched.length === 0) return
    const columns = sql.raw(ROLLUP_COLUMNS.join(', '))
    const parts: RawBuilder<unknown>[] = []
    for (const [deviceId, d] of touched) {
      const hours = [...d.hourly.keys()]
      const days = [...d.daily.keys()]
      if (hours.length > 0) parts.push(sql`select device_id, 'hour' as bucket, hour_start as start, ${columns} from production_hourly where device_id = ${deviceId} and hour_start in (${sql.join(hours)})`)
      if (days.length > 0) parts.push(sql`select device_id, 'day' as bucket, day_start as start, ${columns} from production_daily where device_id = ${deviceId} and day_start in (${sql.join(days)})`)
    }
    const stored = new Map<string, RollupValues>()
    for (let i = 0; i < parts.length; i += CHUNK) {
      const { rows } = await sql<RollupValues & { device_id: string; bucket: 'hour' | 'day'; start: number }>`${sql.join(parts.slice(i, i + CHUNK), sql` union all `)}`.execute(trx)
      for (const row of rows) stored.set(`${row.bucket} ${Number(row.start)} ${row.device_id}`, row)
    }
    const hourRows: HourRow[] = []
    const dayRows: DayRow[] = []
    for (const [deviceId, d] of touched) {
      for (const [start, delta] of d.hourly) hourRows.push({ device_id: deviceId, hour_start: start, ...added(stored.get(`hour ${start} ${deviceId}`), delta) })
      for (const [start, delta] of d.daily) dayRows.push({ device_id: deviceId, day_start: start, ...added(stored.get(`day ${start} ${deviceId}`), delta) })
    }
    for (const statement of [...this.hourly.statements(hourRows), ...this.daily.statements(dayRows)]) await trx.executeQuery(statement)
  }
}

function added(row: RollupValues | undefined, delta: BucketDelta): RollupValues {
  const out = {} as RollupValues
  for (const column of SECONDS_COLUMNS) out[column] = Number(row?.[column] ?? 0) + (delta.seconds[column] ?? 0)
  out.placed = Number(row?.placed ?? 0) + delta.placed
  out.missed = Number(row?.missed ?? 0) + delta.missed
  out.jobs_completed = Number(row?.jobs_completed ?? 0) + delta.jobsCompleted
  if (delta.faults.size === 0 && row) out.faults = row.faults
  else {
    const faults = JSON.parse(row?.faults ?? '{}') as Record<string, number>
    for (const [fault, n] of delta.faults) faults[fault] = (faults[fault] ?? 0) + n
    out.faults = JSON.stringify(faults)
  }
  out.feeders = mergeCounts(row?.feeders, 'feeder', delta.feeders)
  out.nozzles = mergeCounts(row?.nozzles, 'nozzle', delta.nozzles)
  return out
}

/** `[{<key>: name, placed, missed}]` with the delta's counts added, sorted by name. */
function mergeCounts(stored: string | undefined, key: 'feeder' | 'nozzle', delta: Map<string, Counts>): string {
  if (delta.size === 0) return stored ?? '[]'
  const counts = new Map<string, Counts>()
  for (const entry of JSON.parse(stored ?? '[]') as (Counts & Record<string, string>)[]) counts.set(entry[key]!, { placed: entry.placed, missed: entry.missed })
  for (const [name, by] of delta) {
    const count = counts.get(name)
    if (count) counts.set(name, { placed: count.placed + by.placed, missed: count.missed + by.missed })
    else counts.set(name, { ...by })
  }
  return JSON.stringify([...counts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([name, c]) => ({ [key]: name, placed: c.placed, missed: c.missed })))
}
