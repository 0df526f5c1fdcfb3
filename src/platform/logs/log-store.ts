import type { Insertable, Selectable } from 'kysely'
import type { Database } from '../../storage/database.js'
import type { Db, Tx } from '../../storage/storage.js'
import type { LogLevel, LogQuery, LogSource } from './log-schemas.js'
import { newestFirstPage } from '../../storage/paging.js'
import { pruneOldest, type PruneStep } from '../../storage/prune-step.js'

export type LogRow = Selectable<Database['platform_logs']>
export type NewLog = Omit<Insertable<Database['platform_logs']>, 'id' | 'source' | 'level'> & { source: LogSource; level: LogLevel }

/** Rows per INSERT (7 parameters each). */
const CHUNK_ROWS = 1000

/** Device logs and operation logs, one table, listed newest first by id. */
export async function insertLogs(db: Db | Tx, entries: NewLog[]): Promise<void> {
  for (let start = 0; start < entries.length; start += CHUNK_ROWS) {
    await db.insertInto('platform_logs').values(entries.slice(start, start + CHUNK_ROWS)).execute()
  }
}

/** Inserts all entries in one transaction; resolves after the commit. */
export async function insertLogBatch(db: Db, entries: NewLog[]): Promise<void> {
  if (entries.length === 0) return
  if (entries.length <= CHUNK_ROWS) return insertLogs(db, entries)
  await db.transaction().execute((tx) => insertLogs(tx, entries))
}

export async function listLogs(db: Db, q: LogQuery): Promise<{ rows: LogRow[]; next_before?: number }> {
  const rows = await db
    .selectFrom('platform_logs')
    .selectAll()
    .$if(q.source !== undefined, (qb) => qb.where('source', '=', q.source!))
    .$if(q.device_id !== undefined, (qb) => qb.where('device_id', '=', q.device_id!))
    .$if(q.level !== undefined, (qb) => qb.where('level', '=', q.level!))
    .$if(q.before !== undefined, (qb) => qb.where('id', '<', q.before!))
    .orderBy('id', 'desc')
    .limit(q.limit + 1)
    .execute()
  return newestFirstPage(rows, q.limit)
}

export async function clearLogs(db: Db | Tx, filter: { device_id?: string; source?: LogSource }): Promise<number> {
  const result = await db
    .deleteFrom('platform_logs')
    .$if(filter.device_id !== undefined, (qb) => qb.where('device_id', '=', filter.device_id!))
    .$if(filter.source !== undefined, (qb) => qb.where('source', '=', filter.source!))
    .executeTakeFirst()
  return Number(result.numDeletedRows)
}

/** Device error entries with a time at or after `since`. */
export async function countDeviceErrorsSince(db: Db, since: number): Promise<number> {
  const row = await db
    .selectFrom('platform_logs')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('ts', '>=', since)
    .where('source', '=', 'device')
    .where('level', '=', 'error')
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/** Deletes up to `batch` of the oldest entries older than `cutoff`, from `from` on (see `pruneOldest`). */
export const pruneLogBatch = (db: Db, cutoff: number, batch: number, from?: number): Promise<PruneStep> => pruneOldest(db, 'platform_logs', cutoff, batch, from, 'id')
