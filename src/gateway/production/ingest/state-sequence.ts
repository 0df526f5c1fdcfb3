import { sql, type CompiledQuery } from 'kysely'
import { insertColumns, MultiRowInsert, type InsertRow } from '../../../storage/multi-row-insert.js'
import type { Db } from '../../../storage/storage.js'
import type { ProductionTables } from '../../../storage/tables/production-tables.js'
import type { RollupDeltas } from './rollup-deltas.js'

/** A row of a machine's state sequence: a state event, or an `offline` row (event_id null) where a link closed. */
export interface StateRow {
  ts: number
  state: string
  reason: string | null
  event_id: string | null
}

/** A machine's current state: its newest state row by ts (`offline` before its first one). */
export interface CurrentState {
  state: string
  reason: string | null
  since: number
}

/** A machine's current state before and after new rows went in. */
export interface StateChange {
  before: CurrentState | undefined
  after: CurrentState
}

/** Order of the sequence: by ts, then event id (an `offline` row, without one, first). Byte order, as the database compares ids. */
export function compareStateRows(a: StateRow, b: StateRow): number {
  if (a.ts !== b.ts) return a.ts - b.ts
  const x = a.event_id ?? ''
  const y = b.event_id ?? ''
  return x < y ? -1 : x > y ? 1 : 0
}

type StatesRow = InsertRow<ProductionTables['production_states']>
type CurrentRow = InsertRow<ProductionTables['production_current']>
const STATE_COLUMNS = insertColumns<ProductionTables['production_states']>()('device_id', 'ts', 'state', 'reason', 'event_id')
const CURRENT_COLUMNS = insertColumns<ProductionTables['production_current']>()('device_id', 'state', 'reason', 'since')

/**
 * A machine's state sequence (§16), kept by `ts`. Its statements are built once and reused
 * with new parameters: a frame of production events runs a dozen, and building them anew each
 * time cost more than running them.
 */
export class StateSequence {
  private readonly stateInsert: MultiRowInsert<StatesRow>
  private readonly currentUpsert: MultiRowInsert<CurrentRow>

  constructor(db: Db) {
    this.stateInsert = new MultiRowInsert(STATE_COLUMNS, (rows) => db.insertInto('production_states').values(rows))
    this.currentUpsert = new MultiRowInsert(CURRENT_COLUMNS, (rows) =>
      db
        .insertInto('production_current')
        .values(rows)
        .onConflict((oc) => oc.column('device_id').doUpdateSet((eb) => ({ state: eb.ref('excluded.state'), reason: eb.ref('excluded.reason'), since: eb.ref('excluded.since') }))),
    )
  }

  /**
   * Puts new rows into machines' state sequences (the caller holds their locks, in its
   * transaction) and keeps the rollups right: each row at ts b between rows a and c splits the
   * closed interval [a, c) into [a, b) and [b, c), so the old interval's seconds are taken away
   * from the hours and days it spans and the new ones added. Only the rows around the new ones
   * are read: a machine whose new rows all come after its current state (its newest row, which
   * production_current holds) needs that row alone; for the others one statement reads, per
   * machine, the rows at the last ts before its earliest new row, those among its new rows,
   * those at the first ts after its latest. Answers, per machine whose newest row changed, its
   * current state before and after, and the writes to run (`writes`, independent of each other).
   * `current`: the machines' current states when the caller read them already, in this
   * transaction and under the same locks (`currentStates`); read here otherwise.
   */
  async insert(
    trx: Db,
    added: Map<string, StateRow[]>,
    deltasOf: (deviceId: string) => RollupDeltas,
    current?: Map<string, CurrentState>,
  ): Promise<{ changes: Map<string, StateChange>; writes: CompiledQuery[] }> {
    const changes = new Map<string, StateChange>()
    const machines = [...added].filter(([, rows]) => rows.length > 0).map(([deviceId, rows]) => ({ deviceId, fresh: [...rows].sort(compareStateRows) }))
    if (machines.length === 0) return { changes, writes: [] }
    const around = await this.neighbourhoods(trx, machines, current ?? (await currentStates(trx, machines.map((m) => m.deviceId))))
    const inserts: StatesRow[] = []
    const currents: CurrentRow[] = []
    for (const { deviceId, fresh } of machines) {
      const [before, among, after] = around.get(deviceId) ?? [[], [], []]
      const previous = before.at(-1)
      const next = after[0]
      const old = [...(previous ? [previous] : []), ...among, ...(next ? [next] : [])]
      const merged = [...old, ...fresh].sort(compareStateRows)
      const deltas = deltasOf(deviceId)
      for (let i = 1; i < old.length; i++) deltas.interval(old[i - 1]!.state, old[i - 1]!.ts, old[i]!.ts, -1)
      for (let i = 1; i < merged.length; i++) deltas.interval(merged[i - 1]!.state, merged[i - 1]!.ts, merged[i]!.ts, 1)
      for (const row of fresh) inserts.push({ device_id: deviceId, ts: row.ts, state: row.state, reason: row.reason, event_id: row.event_id })
      if (next) continue
      const newest = merged.at(-1)!
      const oldNewest = old.at(-1)
      if (oldNewest && compareStateRows(newest, oldNewest) === 0) continue
      const current = { state: newest.state, reason: newest.reason, since: newest.ts }
      currents.push({ device_id: deviceId, ...current })
      changes.set(deviceId, { before: oldNewest && { state: oldNewest.state, reason: oldNewest.reason, since: oldNewest.ts }, after: current })
    }
    return { changes, writes: [...this.stateInsert.statements(inserts), ...this.currentUpsert.statements(currents)] }
  }

  /**
   * Per machine, the stored rows [before, among, after] its new ones, each sorted. In order
   * (every new row later than the current state): `before` is the current state's row alone, as
   * the current state tells it (its event id is not kept: no new row shares its ts), the others empty.
   */
  private async neighbourhoods(trx: Db, machines: { deviceId: string; fresh: StateRow[] }[], current: Map<string, CurrentState>): Promise<Map<string, StateRow[][]>> {
    const around = new Map<string, StateRow[][]>()
    const outOfOrder = machines.filter(({ deviceId, fresh }) => {
      const state = current.get(deviceId)
      if (!state || !(state.since < fresh[0]!.ts)) return true
      around.set(deviceId, [[{ ts: state.since, state: state.state, reason: state.reason, event_id: null }], [], []])
      return false
    })
    if (outOfOrder.length === 0) return around
    const parts = outOfOrder.map(({ deviceId, fresh }) => {
      const first = fresh[0]!.ts
      const last = fresh.at(-1)!.ts
      return sql`
        select device_id, ts, state, reason, event_id, 0 as part from production_states
          where device_id = ${deviceId} and ts = (select max(ts) from production_states where device_id = ${deviceId} and ts < ${first})
        union all
        select device_id, ts, state, reason, event_id, 1 as part from production_states where device_id = ${deviceId} and ts >= ${first} and ts <= ${last}
        union all
        select device_id, ts, state, reason, event_id, 2 as part from production_states
          where device_id = ${deviceId} and ts = (select min(ts) from production_states where device_id = ${deviceId} and ts > ${last})`
    })
    const { rows } = await sql<StateRow & { device_id: string; part: number }>`${sql.join(parts, sql` union all `)}`.execute(trx)
    for (const { deviceId } of outOfOrder) around.set(deviceId, [[], [], []])
    for (const row of rows) around.get(row.device_id)![Number(row.part)]!.push({ ts: Number(row.ts), state: row.state, reason: row.reason, event_id: row.event_id })
    for (const parts of around.values()) for (const part of parts) part.sort(compareStateRows)
    return around
  }
}

/** The current state of each of `deviceIds` that has one (read in the caller's transaction). */
export async function currentStates(trx: Db, deviceIds: string[]): Promise<Map<string, CurrentState>> {
  const rows = await trx.selectFrom('production_current').select(['device_id', 'state', 'reason', 'since']).where('device_id', 'in', deviceIds).execute()
  return new Map(rows.map((r) => [r.device_id, { state: r.state, reason: r.reason, since: Number(r.since) }]))
}
