import { sql, type Expression, type SqlBool } from 'kysely'
import { bucketOf, tally, type TallyKind } from './window-tallies.js'
import type { Db, RowId } from './storage.js'
/** What one batch of a pruning pass deleted: how many rows, and where the next batch starts (its `from`). */
export interface PruneStep {
  deleted: number
  /** Along the time index, the newest time deleted; along SQLite's point ranges, the next row id. */
  next?: number
}

export function pruneStep(rows: { ts: number }[]): PruneStep {
  let newest: number | undefined
  for (const { ts } of rows) if (newest === undefined || ts > newest) newest = Number(ts)
  return newest === undefined ? { deleted: 0 } : { deleted: rows.length, next: newest }
}

/** The rows of a table that `window-tallies` counts, under `kind`: those matching `where` (default: all). */
export interface TalliedRows {
  kind: TallyKind
  where?: Expression<SqlBool>
}

/**
 * Deletes up to `batch` of the oldest rows of `table` older than `cutoff`, from `from` on (the
 * `next` of the previous batch): each batch starts where the last ended on the time index,
 * never walking again over what was deleted (on PostgreSQL, dead index entries until vacuum).
 * `rowId` names the rows: the table's key, or for a table without one the engine's row id
 * (`Storage.rowId`; PostgreSQL finds a `ctid` list by TID scans). The deleted rows that
 * `tallied` names, in the cutoff's minute, are taken off its tally in the same transaction.
 */
export async function pruneOldest(
  db: Db,
  table: 'platform_telemetry' | 'platform_logs',
  cutoff: number,
  batch: number,
  from: number | undefined,
  rowId: RowId | 'id',
  tallied: TalliedRows,
): Promise<PruneStep> {
  const counted = tallied.where ? sql<number>`case when ${tallied.where} then 1 else 0 end` : sql<number>`1`
  return db.transaction().execute(async (tx) => {
    const rows = await tx
      .deleteFrom(table)
      .where((eb) =>
        eb(
          sql.ref(rowId),
          'in',
          eb
            .selectFrom(table)
            .select(sql.ref<string>(rowId).as('row_id'))
            .where('ts', '<', cutoff)
            .$if(from !== undefined, (q) => q.where('ts', '>=', from!))
            .orderBy('ts')
            .limit(batch),
        ),
      )
      .returning(['ts', counted.as('counted')])
      .execute()
    // Only the minute the cutoff lies in keeps its tally: those of the minutes before it are
    // dropped whole once the pass reaches the cutoff (`dropTalliesBefore`), not row by row here.
    const cutoffMinute = bucketOf(cutoff)
    await tally(
      tx,
      tallied.kind,
      rows.filter((r) => Number(r.counted) === 1 && Number(r.ts) >= cutoffMinute).map((r) => Number(r.ts)),
      -1,
    )
    return pruneStep(rows)
  })
}
