import { sql, type RawBuilder, type Selectable, type SelectQueryBuilder, type SqlBool } from 'kysely'
import type { Database } from '../../storage/database.js'
import { AppError } from '../../errors.js'
import type { Db, Storage } from '../../storage/storage.js'
import type { ProductionTables } from '../../storage/tables/production-tables.js'
import type { DevicesCondition } from '../labels/selector/selector-sql.js'
import { E10_STATES, sixOf, type E10State, type GroupSums } from './production-figures.js'
import { HOUR } from './window-plan.js'

/** Which machines a read covers: one by id, or those matching a condition on `devices`. */
export type MachineScope = { deviceId: string } | { where: DevicesCondition }

/** The rollup columns of `production_hourly` and `production_daily`. */
export interface RollupRow {
  device_id: string
  start: number
  seconds: Record<E10State, number>
  placed: number
  missed: number
  jobs_completed: number
  faults: string
  feeders: string
  nozzles: string
}

/** A fleet query's window: its whole hours (read from the running totals), its raw edges, and the part of it before now. */
export interface FleetWindow {
  whole: Range | undefined
  raw: readonly Range[]
  covered: Range
  now: number
}

/** A closed state interval [ts, next_ts) of one machine. */
export interface StateInterval {
  device_id: string
  state: string
  ts: number
  next_ts: number
}

export interface RawEventRow {
  kind: string
  placed: number | null
  missed: number | null
  body: string
}

export interface CurrentState {
  device_id: string
  state: string
  since: number
}

/** A job as the jobs endpoint lists it. */
export type JobRow = Omit<Selectable<ProductionTables['production_jobs']>, 'device_id'>

const STATE_COLUMNS = E10_STATES.map((state) => `s_${state}` as const)
const RUN_COLUMNS = [...STATE_COLUMNS.map((c) => `run_${c}` as const), 'run_placed', 'run_missed'] as const
type Range = { start: number; end: number }
type Rollup = { table: 'production_hourly'; startColumn: 'hour_start' } | { table: 'production_daily'; startColumn: 'day_start' }
export const HOURLY: Rollup = { table: 'production_hourly', startColumn: 'hour_start' }
export const DAILY: Rollup = { table: 'production_daily', startColumn: 'day_start' }

/**
 * A window whose last raw edge is in the hour under way, [its start, end): that hour's row holds
 * every event of the hour (the ingest keeps it in the same transaction as the events), so the
 * edge is read from the running totals as the whole hour, less what lies after `end` in it
 * (`ahead`: the minutes between the window's end and now, and events up to 5 minutes ahead),
 * instead of summing its raw events: a fleet's hour of placements is 100,000 rows and more.
 */
function withHourUnderWay(window: FleetWindow): { whole: Range | undefined; raw: readonly Range[]; ahead?: Range } {
  const last = window.raw.at(-1)
  const hourUnderWay = Math.floor(window.now / HOUR) * HOUR
  if (last === undefined || last.start !== hourUnderWay || (window.whole !== undefined && window.whole.end !== last.start)) return window
  const hourEnd = last.start + HOUR
  return { whole: { start: window.whole?.start ?? last.start, end: hourEnd }, raw: window.raw.slice(0, -1), ahead: { start: last.end, end: hourEnd } }
}

const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v))

/**
 * Reads of the production tables the ingest side writes (§16): rollups by hour and by day, state
 * intervals and events of the raw window, each machine's current state, and jobs. Only reads.
 */
export class ProductionRepository {
  private readonly db: Db

  constructor(private readonly storage: Pick<Storage, 'db' | 'dialect'>) {
    this.db = storage.db
  }

  /** Rollup rows whose start is in one of `ranges`, every column. */
  async rollupRows(rollup: Rollup, scope: MachineScope, ranges: readonly Range[]): Promise<RollupRow[]> {
    if (ranges.length === 0) return []
    const { rows } = await sql<Record<string, unknown>>`
      select device_id, ${sql.ref(rollup.startColumn)} as start, ${sql.join(STATE_COLUMNS.map((c) => sql.ref(c)))},
             placed, missed, jobs_completed, faults, feeders, nozzles
      from ${sql.table(rollup.table)}
      where ${this.scopeSql('device_id', scope)} and (${this.rangesSql(rollup.startColumn, ranges)})`.execute(this.db)
    return rows.map((r) => ({
      device_id: String(r.device_id),
      start: num(r.start),
      seconds: sixOf(r, 's_'),
      placed: num(r.placed),
      missed: num(r.missed),
      jobs_completed: num(r.jobs_completed),
      faults: String(r.faults ?? '{}'),
      feeders: String(r.feeders ?? '[]'),
      nozzles: String(r.nozzles ?? '[]'),
    }))
  }

  /**
   * The fleet query's sums (§16) per group of the scope's machines: by the value of label
   * `labelKey` (null without it), or by machine when it is undefined. One statement: each
   * machine's sums over the window's whole hours (`machinesQuery`), plus its closed state
   * intervals and placements inside the window's raw edges, plus the open interval of its current
   * state, with `offline` what the six states leave of the span (never below 0, per machine);
   * then the groups' sums. The database adds up 10,000 machines; the gateway gets one row a group.
   */
  async fleetGroups(scope: MachineScope, labelKey: string | undefined, window: FleetWindow): Promise<(GroupSums & { key: string | null })[]> {
    const { rows } = await this.fleetGroupsStatement(scope, labelKey, window).execute(this.db)
    return rows.map((r) => ({
      key: r.group_key === null || r.group_key === undefined ? null : String(r.group_key),
      devices: num(r.devices),
      seconds: { ...sixOf(r, 's_'), offline: num(r.s_offline) },
      placed: num(r.placed),
      missed: num(r.missed),
      rated_placed: num(r.rated_placed),
      rated_seconds: num(r.rated_seconds),
    }))
  }

  /** The statement `fleetGroups` runs (the bench prints its plan). */
  fleetGroupsStatement(scope: MachineScope, labelKey: string | undefined, window: FleetWindow) {
    const postgres = this.storage.dialect === 'postgres'
    const [greatest, least] = postgres ? ['greatest', 'least'] : ['max', 'min']
    const n = (value: number) => sql`cast(${value} as double precision)`
    const clamped = (expression: RawBuilder<unknown>) => sql`${sql.raw(greatest)}(0, ${expression})`
    const { whole, raw, ahead } = withHourUnderWay(window)
    const machines = this.machinesQuery(scope, labelKey, whole).clearOrderBy()
    // Closed intervals inside each raw edge, clipped to it (the newest interval of a machine is
    // still open), and those of the hour under way after the window's end, to subtract.
    const edges = [...raw.map((range) => ({ range, sign: sql`` })), ...(ahead ? [{ range: ahead, sign: sql`-` }] : [])]
    const clipped = edges.map(
      ({ range, sign }) => sql`select device_id, state, ${sign}${clamped(sql`${sql.raw(least)}(next_ts, ${n(range.end)}) - ${sql.raw(greatest)}(ts, ${n(range.start)})`)} as seconds
        from ${this.stateIntervalsQuery(scope, range)} as edge where next_ts is not null`,
    )
    const intervals =
      clipped.length === 0
        ? sql`select cast(null as text) as device_id, ${sql.join(E10_STATES.map((state) => sql`0 as ${sql.ref(`s_${state}`)}`))} where 1 = 0`
        : sql`select device_id, ${sql.join(E10_STATES.map((state) => sql`sum(case when state = ${state} then seconds else 0 end) as ${sql.ref(`s_${state}`)}`))}
            from (${sql.join(clipped, sql` union all `)}) as clipped group by device_id`
    // Placements of the raw edges, less those of the hour under way after the window's end.
    const signed = (column: string) => (ahead ? sql`sum(case when ts >= ${n(ahead.start)} then -${sql.ref(column)} else ${sql.ref(column)} end)` : sql`sum(${sql.ref(column)})`)
    const placements =
      edges.length === 0
        ? sql`select cast(null as text) as device_id, 0 as placed, 0 as missed where 1 = 0`
        : sql`select device_id, ${signed('placed')} as placed, ${signed('missed')} as missed from production_events
            where ${this.scopeSql('device_id', scope)} and kind = 'placements' and (${this.rangesSql('ts', edges.map((e) => e.range))}) group by device_id`
    const openEnd = Math.min(window.covered.end, window.now)
    const stateColumns = E10_STATES.map(
      (state) => sql`m.${sql.ref(`s_${state}`)} + coalesce(iv.${sql.ref(`s_${state}`)}, 0) + case when cur.state = ${state} then cur.open_seconds else 0 end as ${sql.ref(`s_${state}`)}`,
    )
    const known = sql.join(E10_STATES.map((state) => sql.ref(`s_${state}`)), sql` + `)
    return sql<Record<string, unknown>>`
      with m as ${machines},
        iv as (${intervals}),
        ps as (${placements}),
        cur as (select device_id, state, ${clamped(sql`${n(openEnd)} - ${sql.raw(greatest)}(since, ${n(window.covered.start)})`)} as open_seconds
          from production_current where ${this.scopeSql('device_id', scope)} and state <> 'offline'),
        per as (
          select ${labelKey === undefined ? sql`m.device_id` : sql`m.label`} as group_key, m.rated_cph, ${sql.join(stateColumns)},
            m.placed + coalesce(ps.placed, 0) as placed, m.missed + coalesce(ps.missed, 0) as missed
          from m left join iv on iv.device_id = m.device_id left join ps on ps.device_id = m.device_id left join cur on cur.device_id = m.device_id)
      select group_key, count(*) as devices, ${sql.join(E10_STATES.map((state) => sql`sum(${sql.ref(`s_${state}`)}) as ${sql.ref(`s_${state}`)}`))},
        sum(${clamped(sql`${n(Math.max(0, window.covered.end - window.covered.start))} - (${known})`)}) as s_offline, sum(placed) as placed, sum(missed) as missed,
        sum(case when rated_cph is null then 0 else placed end) as rated_placed, sum(coalesce(rated_cph, 0) * s_productive) as rated_seconds
      from per group by group_key`
  }

  /**
   * Every machine of the scope with its rating, the value of label `labelKey` (null without it)
   * and its seconds per state, placed and missed over the whole hours `range` (zeros without
   * one). The sums are differences of the hourly running totals (migration 0018) at the range's
   * ends: at an hour, a machine's totals are those of its newest hourly row starting before it.
   *
   * PostgreSQL: the machines with a row for the hour just before a bound (they produced then)
   * are read together from the index by hour (0018), adjacent entries, without the table; only
   * the others probe their primary key for their newest earlier row. SQLite probes each machine
   * (in-process, cheap), by rowid as it has no LATERAL.
   */
  private machinesQuery(scope: MachineScope, labelKey: string | undefined, range: Range | undefined) {
    const postgres = this.storage.dialect === 'postgres'
    let query = this.db
      .selectFrom('devices')
      .select(['devices.device_id', 'devices.rated_cph'])
      .$if(labelKey !== undefined, (q) =>
        q.leftJoin('device_labels as label', (join) => join.onRef('label.device_id', '=', 'devices.device_id').on('label.key', '=', labelKey!)).select('label.value as label'),
      ) as unknown as SelectQueryBuilder<Database, 'devices', Record<string, unknown>>
    if (range !== undefined) {
      const bounds = [
        { alias: 'to', hour: range.end },
        { alias: 'from', hour: range.start },
      ] as const
      for (const { alias, hour } of bounds) {
        query = (
          postgres
            ? query
                .leftJoin(`production_hourly as ${alias}_at` as 'production_hourly', (join) =>
                  join.onRef(sql.ref(`${alias}_at.device_id`) as never, '=', 'devices.device_id').on(sql.ref(`${alias}_at.hour_start`) as never, '=', (hour - 3600) as never),
                )
                .leftJoinLateral(
                  (eb) =>
                    eb
                      .selectFrom('production_hourly as before')
                      .select(RUN_COLUMNS.map((c) => `before.${c}` as const))
                      .where(sql<SqlBool>`${sql.ref(`${alias}_at.device_id`)} is null`)
                      .whereRef('before.device_id', '=', 'devices.device_id')
                      .where('before.hour_start', '<', hour)
                      .orderBy('before.hour_start', 'desc')
                      .limit(1)
                      .as(`${alias}_before`),
                  (join) => join.onTrue(),
                )
            : query.leftJoin(`production_hourly as ${alias}_at` as 'production_hourly', (join) =>
                join.on(
                  sql.ref(`${alias}_at.rowid`) as never,
                  '=',
                  sql`(select x.rowid from production_hourly x where x.device_id = devices.device_id and x.hour_start < ${hour} order by x.hour_start desc limit 1)`,
                ),
              )
        ) as unknown as SelectQueryBuilder<Database, 'devices', Record<string, unknown>>
      }
      const at = (alias: string, c: string) => (postgres ? sql`coalesce(${sql.ref(`${alias}_at.${c}`)}, ${sql.ref(`${alias}_before.${c}`)}, 0)` : sql`coalesce(${sql.ref(`${alias}_at.${c}`)}, 0)`)
      query = query.select(RUN_COLUMNS.map((c) => sql`${at('to', c)} - ${at('from', c)}`.as(c.slice('run_'.length))) as never)
    } else {
      query = query.select(RUN_COLUMNS.map((c) => sql<number>`0`.as(c.slice('run_'.length))) as never)
    }
    query = 'deviceId' in scope ? query.where('devices.device_id', '=', scope.deviceId) : query.where(scope.where)
    return query.orderBy('devices.device_id')
  }

  /**
   * The closed state intervals that overlap [start, end): the state in effect at `start` and
   * every later one before `end`, each up to the machine's next state row by (ts, event_id) (a
   * null event_id, a link's close, first). The newest state
   * of a machine has no end yet: it is `production_current`'s open interval, not listed here.
   */
  async stateIntervals(scope: MachineScope, range: Range): Promise<StateInterval[]> {
    const rows = (await this.stateIntervalsQuery(scope, range).execute()) as { device_id: string; state: string; ts: number; next_ts: number | null }[]
    return rows.filter((r) => r.next_ts !== null).map((r) => ({ device_id: r.device_id, state: r.state, ts: Number(r.ts), next_ts: Number(r.next_ts) }))
  }

  /** `stateIntervals`' statement: every interval, the newest of a machine with a null `next_ts`. */
  private stateIntervalsQuery(scope: MachineScope, range: Range) {
    // Every read is bounded by the (device_id, ts, event_id) index: the rows inside the range,
    // the row(s) in effect at its start (found from each machine), and each one's next row from
    // its own ts on (a bare OR would scan the machine's whole history).
    const next = sql`(select min(n.ts) from production_states n
      where n.device_id = s.device_id and n.ts >= s.ts
        and (n.ts > s.ts or coalesce(n.event_id, '') > coalesce(s.event_id, '')))`
    const machines = 'deviceId' in scope ? this.db.selectFrom('devices').where('devices.device_id', '=', scope.deviceId) : this.db.selectFrom('devices').where(scope.where)
    const atStart = machines
      .innerJoin('production_states as s', (join) =>
        join
          .onRef('s.device_id', '=', 'devices.device_id')
          .on('s.ts', '=', sql<number>`(select max(p.ts) from production_states p where p.device_id = devices.device_id and p.ts <= ${range.start})`),
      )
      .select(['s.device_id', 's.state', 's.ts', next.as('next_ts')])
    const inside = this.db
      .selectFrom('production_states as s')
      .select(['s.device_id', 's.state', 's.ts', next.as('next_ts')])
      .where(this.scopeSql('s.device_id', scope))
      .where('s.ts', '>', range.start)
      .where('s.ts', '<', range.end)
    return atStart.unionAll(inside)
  }

  /** One machine's raw events with `ts` in [start, end) that figures count: placements, faults and ended jobs. */
  async events(deviceId: string, range: Range): Promise<RawEventRow[]> {
    const rows = await this.db
      .selectFrom('production_events')
      .select(['kind', 'placed', 'missed', 'body'])
      .where('device_id', '=', deviceId)
      .where('kind', 'in', ['placements', 'fault', 'job_ended'])
      .where('ts', '>=', range.start)
      .where('ts', '<', range.end)
      .execute()
    return rows.map((r) => ({ kind: r.kind, placed: r.placed === null ? null : Number(r.placed), missed: r.missed === null ? null : Number(r.missed), body: r.body }))
  }

  /** The current state of each machine of the scope that has one, unless `offline`. */
  async currentStates(scope: MachineScope): Promise<CurrentState[]> {
    const { rows } = await sql<{ device_id: string; state: string; since: number }>`
      select device_id, state, since from production_current where ${this.scopeSql('device_id', scope)} and state <> 'offline'`.execute(this.db)
    return rows.map((r) => ({ device_id: r.device_id, state: r.state, since: Number(r.since) }))
  }

  /** One machine's current state (§16 addition), `offline` included; undefined when it never reported one. */
  async currentState(deviceId: string): Promise<{ state: string; reason: string | null; since: number } | undefined> {
    const row = await this.db.selectFrom('production_current').select(['state', 'reason', 'since']).where('device_id', '=', deviceId).executeTakeFirst()
    return row && { state: row.state, reason: row.reason ?? null, since: Number(row.since) }
  }

  /** One machine's jobs, newest first (by start, then id); `after` is the job id the previous page ended with. */
  async jobs(deviceId: string, limit: number, after?: string): Promise<{ rows: JobRow[]; next_after?: string }> {
    let query = this.db
      .selectFrom('production_jobs')
      .select(['job_id', 'order_id', 'program', 'started_at', 'ended_at', 'result', 'boards_planned', 'boards_done', 'placed', 'missed'])
      .where('device_id', '=', deviceId)
      .orderBy(sql`coalesce(started_at, ended_at, 0)`, 'desc')
      .orderBy('job_id', 'desc')
      .limit(limit + 1)
    if (after !== undefined) {
      const cursor = await this.db
        .selectFrom('production_jobs')
        .select(sql<number>`coalesce(started_at, ended_at, 0)`.as('at'))
        .where('device_id', '=', deviceId)
        .where('job_id', '=', after)
        .executeTakeFirst()
      if (!cursor) throw new AppError('bad_request', 'Unknown cursor: after names no job of this machine')
      const at = Number(cursor.at)
      query = query.where((eb) =>
        eb.or([eb(sql`coalesce(started_at, ended_at, 0)`, '<', at), eb.and([eb(sql`coalesce(started_at, ended_at, 0)`, '=', at), eb('job_id', '<', after)])]),
      )
    }
    const found = await query.execute()
    const rows = found.slice(0, limit).map((r) => ({
      job_id: r.job_id,
      order_id: r.order_id ?? null,
      program: r.program ?? null,
      started_at: r.started_at === null ? null : Number(r.started_at),
      ended_at: r.ended_at === null ? null : Number(r.ended_at),
      result: r.ended_at === null ? null : (r.result ?? null),
      boards_planned: r.boards_planned === null ? null : Number(r.boards_planned),
      boards_done: r.boards_done === null ? null : Number(r.boards_done),
      placed: num(r.placed),
      missed: num(r.missed),
    }))
    return found.length > limit ? { rows, next_after: rows[rows.length - 1]!.job_id } : { rows }
  }

  private scopeSql(column: string, scope: MachineScope) {
    if ('deviceId' in scope) return sql<SqlBool>`${sql.ref(column)} = ${scope.deviceId}`
    const ids = this.db.selectFrom('devices').select('devices.device_id').where(scope.where)
    return sql<SqlBool>`${sql.ref(column)} in (${ids})`
  }

  private rangesSql(column: string, ranges: readonly Range[]) {
    return sql.join(
      ranges.map((r) => sql`(${sql.ref(column)} >= ${r.start} and ${sql.ref(column)} < ${r.end})`),
      sql` or `,
    )
  }
}
