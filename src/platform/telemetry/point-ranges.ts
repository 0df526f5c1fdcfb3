import { sql } from 'kysely'
import { type PruneStep } from '../../storage/prune-step.js'
import type { Database } from '../../storage/database.js'
import { insertColumns, MultiRowInsert } from '../../storage/multi-row-insert.js'
import type { Db, Tx } from '../../storage/storage.js'
import { bucketOf, tally } from '../../storage/window-tallies.js'

/**
 * The time bounds of SQLite's telemetry points per range of row ids (`platform_telemetry_ranges`),
 * in place of an index on time (the block-range idea of PostgreSQL's BRIN). Points are stored in
 * row id order, which is the order they arrived in, so a range's points are a few pages written
 * together and mostly of one stretch of time. A time index cost ingest an insert per point into a
 * second B-tree (`bench -- ingest`: 0.42 of the plain storage limit with it, 0.48 with the
 * ranges, medians of 12 and 15 rounds); the bounds cost one upsert per INSERT statement.
 * Retention deletes the expired points range by range, in row id order (each of the table's
 * pages rewritten once; the series index's leaves as often as points of theirs are deleted in
 * separate batches), and the summary's edge minute counts only the ranges whose bounds reach into it.
 *
 * The bounds hold every point of their range: `min_ts` at most, `max_ts` at least, each point's
 * time. Writes that bypass `recordRanges` (the data benchmark's load) call `summarizeRanges` after.
 * SQLite only: PostgreSQL keeps its time index (its points are named by `ctid`, which an INSERT
 * does not return, and it orders points by free space, not by arrival).
 */
export const RANGE_ROWS = 1024

const rangeOf = (rowId: number) => Math.floor(rowId / RANGE_ROWS)

interface RangeBounds {
  range_id: number
  min_ts: number
  max_ts: number
}

/**
 * Widens the bounds of the ranges that rows `lastRowId - times.length + 1 … lastRowId` lie in,
 * `times` being those rows' times in insertion order: SQLite gives the rows of one INSERT
 * consecutive row ids (one more than the largest in the table, row after row). Call in the
 * INSERT's transaction, with the `insertId` it reported.
 */
export async function recordRanges(tx: Tx, upsert: RangeUpsert, lastRowId: number, times: readonly number[]): Promise<void> {
  if (times.length === 0) return
  const first = lastRowId - times.length + 1
  const bounds: RangeBounds[] = []
  for (let i = 0; i < times.length; i++) {
    const range = rangeOf(first + i)
    const ts = times[i]!
    const last = bounds[bounds.length - 1]
    if (last?.range_id === range) {
      if (ts < last.min_ts) last.min_ts = ts
      if (ts > last.max_ts) last.max_ts = ts
    } else bounds.push({ range_id: range, min_ts: ts, max_ts: ts })
  }
  for (const statement of upsert.statements(bounds)) await tx.executeQuery(statement)
}

export type RangeUpsert = ReturnType<typeof rangeUpsert>

/** Widens ranges' bounds, creating those not recorded yet (its text built once per row count: it runs with every INSERT of points). */
export const rangeUpsert = (db: Db) =>
  new MultiRowInsert(insertColumns<Database['platform_telemetry_ranges']>()('range_id', 'min_ts', 'max_ts'), (rows: RangeBounds[]) =>
    db
      .insertInto('platform_telemetry_ranges')
      .values(rows)
      .onConflict((oc) =>
        oc.column('range_id').doUpdateSet({
          min_ts: sql`min(platform_telemetry_ranges.min_ts, excluded.min_ts)`,
          max_ts: sql`max(platform_telemetry_ranges.max_ts, excluded.max_ts)`,
        }),
      ),
  )

/** Rebuilds every range's bounds from the points (after points were written past `recordRanges`). */
export async function summarizeRanges(db: Db | Tx): Promise<void> {
  await db.deleteFrom('platform_telemetry_ranges').execute()
  await sql`
    insert into platform_telemetry_ranges (range_id, min_ts, max_ts)
    select rowid / ${sql.lit(RANGE_ROWS)}, min(ts), max(ts) from platform_telemetry group by rowid / ${sql.lit(RANGE_ROWS)}`.execute(db)
}

const rowsOf = (range: number) => ({ lo: range * RANGE_ROWS, hi: (range + 1) * RANGE_ROWS })

/**
 * Deletes up to `batch` points older than `cutoff`, in row id order from row `from` on (the
 * `next` of the previous batch), over the ranges whose bounds start before the cutoff. A range
 * passed to its end gets its bounds anew from the points left in it (none: its row goes). The
 * deleted points of the cutoff's minute are taken off its tally in the same transaction (those of
 * earlier minutes are dropped whole at the end of the pass, as on PostgreSQL).
 */
export function pruneRanges(db: Db, cutoff: number, batch: number, from = 0): Promise<PruneStep> {
  const cutoffMinute = bucketOf(cutoff)
  return db.transaction().execute(async (tx) => {
    let deleted = 0
    let next = from
    const edge: number[] = []
    while (deleted < batch) {
      const range = await tx
        .selectFrom('platform_telemetry_ranges')
        .select('range_id')
        .where('range_id', '>=', rangeOf(next))
        .where('min_ts', '<', cutoff)
        .orderBy('range_id')
        .limit(1)
        .executeTakeFirst()
      if (!range) break
      const { lo, hi } = rowsOf(range.range_id)
      const start = Math.max(lo, next)
      const want = batch - deleted
      const rows = await tx
        .deleteFrom('platform_telemetry')
        .where((eb) =>
          eb(
            sql.ref('rowid'),
            'in',
            eb
              .selectFrom('platform_telemetry')
              .select(sql.ref<number>('rowid').as('row_id'))
              .where(sql.ref('rowid'), '>=', start)
              .where(sql.ref('rowid'), '<', hi)
              .where('ts', '<', cutoff)
              .orderBy(sql.ref('rowid'))
              .limit(want),
          ),
        )
        .returning([sql.ref<number>('rowid').as('row_id'), 'ts'])
        .execute()
      deleted += rows.length
      for (const { ts } of rows) if (Number(ts) >= cutoffMinute) edge.push(Number(ts))
      if (rows.length === want) {
        next = Math.max(...rows.map((r) => Number(r.row_id))) + 1
        break
      }
      await tightenBounds(tx, range.range_id)
      next = hi
    }
    await tally(tx, 'telemetry', edge, -1)
    return { deleted, next }
  })
}

/** Sets a range's bounds to those of the points left in it; drops its row when none is. */
async function tightenBounds(tx: Tx, range: number): Promise<void> {
  const { lo, hi } = rowsOf(range)
  const left = await tx
    .selectFrom('platform_telemetry')
    .select((eb) => [eb.fn.min<number>('ts').as('min_ts'), eb.fn.max<number>('ts').as('max_ts')])
    .where(sql.ref('rowid'), '>=', lo)
    .where(sql.ref('rowid'), '<', hi)
    .executeTakeFirst()
  if (left?.min_ts == null) await tx.deleteFrom('platform_telemetry_ranges').where('range_id', '=', range).execute()
  else await tx.updateTable('platform_telemetry_ranges').set({ min_ts: left.min_ts, max_ts: left.max_ts }).where('range_id', '=', range).execute()
}

/** Points with `from` ≤ time < `to`: counted in the ranges whose bounds overlap that span only. */
export async function countInRanges(db: Db, from: number, to: number): Promise<number> {
  const row = await countInRangesQuery(db, from, to).executeTakeFirstOrThrow()
  return Number(row.n)
}

/** The query of `countInRanges` (its plan is tested). */
export function countInRangesQuery(db: Db, from: number, to: number) {
  return db
    .selectFrom('platform_telemetry_ranges as r')
    .innerJoin('platform_telemetry as p', (join) =>
      join
        .on(sql.ref('p.rowid'), '>=', sql<number>`r.range_id * ${sql.lit(RANGE_ROWS)}`)
        .on(sql.ref('p.rowid'), '<', sql<number>`(r.range_id + 1) * ${sql.lit(RANGE_ROWS)}`),
    )
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('r.min_ts', '<', to)
    .where('r.max_ts', '>=', from)
    .where('p.ts', '>=', from)
    .where('p.ts', '<', to)
}
