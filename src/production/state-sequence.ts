import type { Db } from '../storage/storage.js'
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

/** Order of the sequence: by ts, then event id (an `offline` row, without one, first). Byte order, as the database compares ids. */
export function compareStateRows(a: StateRow, b: StateRow): number {
  if (a.ts !== b.ts) return a.ts - b.ts
  const x = a.event_id ?? ''
  const y = b.event_id ?? ''
  return x < y ? -1 : x > y ? 1 : 0
}

const COLUMNS = ['ts', 'state', 'reason', 'event_id'] as const

/**
 * Puts new rows into a machine's state sequence (the caller holds the machine's lock, in its
 * transaction) and keeps the rollups right: each row at ts b between rows a and c splits the
 * closed interval [a, c) into [a, b) and [b, c), so the old interval's seconds are taken away
 * from the hours and days it spans and the new ones added. Only the rows around the new ones
 * are read: the last before the earliest new row, those among them, the first after the latest.
 * Answers the machine's current state before and after when the newest row changed.
 */
export async function insertStates(trx: Db, deviceId: string, added: StateRow[], deltas: RollupDeltas): Promise<{ before: CurrentState | undefined; after: CurrentState } | undefined> {
  if (added.length === 0) return undefined
  const fresh = [...added].sort(compareStateRows)
  const first = fresh[0]!.ts
  const last = fresh.at(-1)!.ts
  const of = () => trx.selectFrom('production_states').select(COLUMNS).where('device_id', '=', deviceId)
  const [previous, among, next] = await Promise.all([
    of().where('ts', '<', first).orderBy('ts', 'desc').orderBy((eb) => eb.fn.coalesce('event_id', eb.val('')), 'desc').limit(1).executeTakeFirst(),
    of().where('ts', '>=', first).where('ts', '<=', last).execute(),
    of().where('ts', '>', last).orderBy('ts').orderBy((eb) => eb.fn.coalesce('event_id', eb.val(''))).limit(1).executeTakeFirst(),
  ])
  const old = [...(previous ? [previous] : []), ...among.map(numeric).sort(compareStateRows), ...(next ? [next] : [])].map(numeric)
  const merged = [...old, ...fresh].sort(compareStateRows)
  for (let i = 1; i < old.length; i++) deltas.interval(old[i - 1]!.state, old[i - 1]!.ts, old[i]!.ts, -1)
  for (let i = 1; i < merged.length; i++) deltas.interval(merged[i - 1]!.state, merged[i - 1]!.ts, merged[i]!.ts, 1)

  await trx
    .insertInto('production_states')
    .values(fresh.map((row) => ({ device_id: deviceId, ts: row.ts, state: row.state, reason: row.reason, event_id: row.event_id })))
    .execute()

  if (next) return undefined
  const newest = merged.at(-1)!
  const oldNewest = old.at(-1)
  if (oldNewest && compareStateRows(newest, oldNewest) === 0) return undefined
  const after = { state: newest.state, reason: newest.reason, since: newest.ts }
  await trx
    .insertInto('production_current')
    .values({ device_id: deviceId, ...after })
    .onConflict((oc) => oc.column('device_id').doUpdateSet(after))
    .execute()
  return { before: oldNewest && { state: oldNewest.state, reason: oldNewest.reason, since: oldNewest.ts }, after }
}

/** The machine's newest state row (read in the caller's transaction). */
export async function currentState(trx: Db, deviceId: string): Promise<CurrentState | undefined> {
  const row = await trx.selectFrom('production_current').select(['state', 'reason', 'since']).where('device_id', '=', deviceId).executeTakeFirst()
  return row && { ...row, since: Number(row.since) }
}

const numeric = (row: StateRow): StateRow => ({ ...row, ts: Number(row.ts) })
