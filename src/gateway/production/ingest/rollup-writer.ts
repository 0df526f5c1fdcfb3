import { sql, type CompiledQuery, type RawBuilder } from 'kysely'
import { MultiRowInsert } from '../../../storage/multi-row-insert.js'
import { TextByShape } from '../../../storage/text-by-shape.js'
import type { Db } from '../../../storage/storage.js'
import type { ProductionRollup, RunningTotals } from '../../../storage/tables/production-tables.js'
import { STATE_COLUMNS, type BucketDelta, type RollupDeltas } from './rollup-deltas.js'
import { RUN_COLUMNS, SUMMED_COLUMNS } from './running-totals.js'

const SECONDS_COLUMNS = Object.values(STATE_COLUMNS)
const ROLLUP_COLUMNS = [...SECONDS_COLUMNS, 'placed', 'missed', 'jobs_completed', 'faults', 'feeders', 'nozzles'] as const
/** Buckets per statement: 23 parameters a row at most, far below both engines' limits. */
const CHUNK = 200

type RollupValues = Omit<ProductionRollup, 'device_id'>
type Counts = { placed: number; missed: number }
type Table = 'production_hourly' | 'production_daily'
type HourRow = { device_id: string; hour_start: number } & RollupValues & RunningTotals
type DayRow = { device_id: string; day_start: number } & RollupValues
/** A row as read back: `hour` and `day` rows in a group's window, `base` the hourly row before it. */
type StoredRow = RollupValues & Partial<RunningTotals> & { device_id: string; bucket: 'hour' | 'day' | 'base'; start: number }

/**
 * Adds a group of frames' deltas to their machines' hourly and daily rows: the touched rows of
 * both tables are read in one statement, the deltas added in memory (the JSON columns merge by
 * fault, feeder and nozzle) and each table written back with one upsert, its text built once
 * and reused; the caller runs them.
 *
 * Hourly rows also carry running totals (migration 0018), so the read takes, per machine, every
 * hourly row from its earliest touched hour on and the row just before it; the totals are
 * recomputed from there and those rows written back. An event of this hour rewrites one row;
 * a late one every later row of its machine (at most 30 days of hours).
 */
export class RollupWriter {
  private readonly hourly: MultiRowInsert<HourRow>
  private readonly daily: MultiRowInsert<DayRow>
  private readonly readTexts = new TextByShape()

  constructor(db: Db) {
    const upsert =
      <R extends object>(table: Table, start: 'hour_start' | 'day_start', columns: readonly string[]) =>
      (rows: R[]) =>
        db
          .insertInto(table)
          .values(rows as never)
          .onConflict((oc) => oc.columns(['device_id', start] as never).doUpdateSet((eb) => Object.fromEntries(columns.map((c) => [c, eb.ref(`excluded.${c}` as never)])) as never))
    const hourColumns = [...ROLLUP_COLUMNS, ...RUN_COLUMNS]
    this.hourly = new MultiRowInsert<HourRow>(['device_id', 'hour_start', ...hourColumns], upsert('production_hourly', 'hour_start', hourColumns), CHUNK)
    this.daily = new MultiRowInsert<DayRow>(['device_id', 'day_start', ...ROLLUP_COLUMNS], upsert('production_daily', 'day_start', ROLLUP_COLUMNS), CHUNK)
  }

  /** Reads the rows each machine's deltas touch and answers the writes that add them (the caller holds their locks, in its transaction, and runs the writes there). */
  async write(trx: Db, deltas: Map<string, RollupDeltas>): Promise<CompiledQuery[]> {
    const touched = [...deltas].filter(([, d]) => !d.empty)
    if (touched.length === 0) return []
    const stored = await this.read(trx, touched)
    const hourRows: HourRow[] = []
    const dayRows: DayRow[] = []
    for (const [deviceId, d] of touched) {
      const rows = stored.get(deviceId)
      if (d.hourly.size > 0) hourRows.push(...withRunningTotals(deviceId, d.hourly, rows?.hour ?? new Map(), rows?.base))
      for (const [start, delta] of d.daily) dayRows.push({ device_id: deviceId, day_start: start, ...added(rows?.day.get(start), delta) })
    }
    return [...this.hourly.statements(hourRows), ...this.daily.statements(dayRows)]
  }

  /** Per machine: its hourly rows from the earliest touched hour on, the hourly row before that, its touched daily rows. */
  private async read(trx: Db, touched: [string, RollupDeltas][]) {
    const parts: { shape: string; parameters: unknown[]; build: () => RawBuilder<unknown> }[] = []
    for (const [deviceId, d] of touched) {
      if (d.hourly.size > 0) {
        const first = Math.min(...d.hourly.keys())
        parts.push({ shape: 'h', parameters: [deviceId, first, deviceId, first], build: () => hourParts(deviceId, first) })
      }
      const days = [...d.daily.keys()]
      if (days.length > 0) parts.push({ shape: `d${days.length}`, parameters: [deviceId, ...days], build: () => dayPart(deviceId, days) })
    }
    const stored = new Map<string, { hour: Map<number, StoredRow>; day: Map<number, StoredRow>; base?: StoredRow }>()
    for (let i = 0; i < parts.length; i += CHUNK) {
      const chunk = parts.slice(i, i + CHUNK)
      const statement = this.readTexts.compiled(
        chunk.map((p) => p.shape).join(','),
        chunk.flatMap((p) => p.parameters),
        () =>
          sql<StoredRow>`${sql.join(
            chunk.map((p) => p.build()),
            sql` union all `,
          )}`.compile(trx),
      )
      const { rows } = await trx.executeQuery(statement)
      for (const row of rows) {
        let machine = stored.get(row.device_id)
        if (!machine) stored.set(row.device_id, (machine = { hour: new Map(), day: new Map() }))
        if (row.bucket === 'base') machine.base = row
        else machine[row.bucket].set(Number(row.start), row)
      }
    }
    return stored
  }
}

const COLUMNS = sql.raw(ROLLUP_COLUMNS.join(', '))
const RUN = sql.raw(RUN_COLUMNS.join(', '))
const NO_RUN = sql.raw(RUN_COLUMNS.map((c) => `0 as ${c}`).join(', '))

/** A machine's hourly rows from `first` on, and the one before. */
const hourParts = (deviceId: string, first: number) => sql`
  select device_id, 'hour' as bucket, hour_start as start, ${COLUMNS}, ${RUN} from production_hourly where device_id = ${deviceId} and hour_start >= ${first}
  union all
  select * from (select device_id, 'base' as bucket, hour_start as start, ${COLUMNS}, ${RUN} from production_hourly where device_id = ${deviceId} and hour_start < ${first} order by hour_start desc limit 1) as before_first`

const dayPart = (deviceId: string, days: number[]) =>
  sql`select device_id, 'day' as bucket, day_start as start, ${COLUMNS}, ${NO_RUN} from production_daily where device_id = ${deviceId} and day_start in (${sql.join(days)})`

/** The machine's hourly rows from its earliest touched hour on, the deltas added and the running totals carried on from `base`. */
function withRunningTotals(deviceId: string, deltas: Map<number, BucketDelta>, stored: Map<number, StoredRow>, base: StoredRow | undefined): HourRow[] {
  const running = Object.fromEntries(RUN_COLUMNS.map((c) => [c, Number(base?.[c] ?? 0)])) as unknown as RunningTotals
  const hours = [...new Set([...stored.keys(), ...deltas.keys()])].sort((a, b) => a - b)
  return hours.map((hour) => {
    const delta = deltas.get(hour)
    const row = stored.get(hour)
    const values = delta ? added(row, delta) : ownValues(row!)
    for (const [i, column] of SUMMED_COLUMNS.entries()) running[RUN_COLUMNS[i]!] += Number(values[column])
    return { device_id: deviceId, hour_start: hour, ...values, ...running }
  })
}

/** A stored row's own figures, numbers as numbers (PostgreSQL answers bigint as text). */
function ownValues(row: StoredRow): RollupValues {
  const out = { jobs_completed: Number(row.jobs_completed), faults: row.faults, feeders: row.feeders, nozzles: row.nozzles } as RollupValues
  for (const column of SUMMED_COLUMNS) out[column] = Number(row[column])
  return out
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
