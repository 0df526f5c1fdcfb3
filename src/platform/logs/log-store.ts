import { sql, type Insertable, type Selectable } from 'kysely'
import type { Database } from '../../storage/database.js'
import type { Db, Tx } from '../../storage/storage.js'
import type { LogLevel, LogQuery, LogSource } from './log-schemas.js'
import { newestFirstPage } from '../../storage/paging.js'
import { pruneOldest, type PruneStep } from '../../storage/prune-step.js'
import { countSince, tally } from '../../storage/window-tallies.js'

export type LogRow = Selectable<Database['platform_logs']>
export type NewLog = Omit<Insertable<Database['platform_logs']>, 'id' | 'source' | 'level'> & { source: LogSource; level: LogLevel }

/** Rows per INSERT (7 parameters each). */
const CHUNK_ROWS = 1000

const isDeviceError = (entry: { source: string; level: string }) => entry.source === 'device' && entry.level === 'error'

/**
 * Device logs and operation logs, one table, listed newest first by id. Device errors are added
 * to the summary's tallies: pass a transaction when there are any (`insertLogBatch` does).
 */
export async function insertLogs(db: Db | Tx, entries: NewLog[]): Promise<void> {
  for (let start = 0; start < entries.length; start += CHUNK_ROWS) {
    await db.insertInto('platform_logs').values(entries.slice(start, start + CHUNK_ROWS)).execute()
  }
  await tally(db, 'device_errors', entries.filter(isDeviceError).map((e) => e.ts))
}

/** Inserts all entries in one transaction; resolves after the commit. */
export async function insertLogBatch(db: Db, entries: NewLog[]): Promise<void> {
  if (entries.length === 0) return
  if (entries.length <= CHUNK_ROWS && !entries.some(isDeviceError)) return insertLogs(db, entries)
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

/**
 * Deletes the entries matching the filter; call inside a transaction. Device errors first, their
 * times returned to take them off the tallies; then the rest, whatever their number, unread.
 */
export async function clearLogs(tx: Tx, filter: { device_id?: string; source?: LogSource }): Promise<number> {
  const deleteMatching = () =>
    tx
      .deleteFrom('platform_logs')
      .$if(filter.device_id !== undefined, (q) => q.where('device_id', '=', filter.device_id!))
      .$if(filter.source !== undefined, (q) => q.where('source', '=', filter.source!))
  const errors = filter.source === 'operation' ? [] : await deleteMatching().where('source', '=', 'device').where('level', '=', 'error').returning('ts').execute()
  await tally(tx, 'device_errors', errors.map((e) => e.ts), -1)
  const rest = await deleteMatching().executeTakeFirst()
  return errors.length + Number(rest.numDeletedRows)
}

/** Device error entries with a time at or after `since`: their tallies per minute, and the entries of the minute `since` lies in. */
export function countDeviceErrorsSince(db: Db, since: number): Promise<number> {
  return countSince(db, 'device_errors', since, async (from, to) => {
    const row = await db
      .selectFrom('platform_logs')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('source', '=', 'device')
      .where('level', '=', 'error')
      .where('ts', '>=', from)
      .where('ts', '<', to)
      .executeTakeFirstOrThrow()
    return Number(row.n)
  })
}

/** Deletes up to `batch` of the oldest entries older than `cutoff`, from `from` on (see `pruneOldest`). */
export const pruneLogBatch = (db: Db, cutoff: number, batch: number, from?: number): Promise<PruneStep> =>
  pruneOldest(db, 'platform_logs', cutoff, batch, from, 'id', { kind: 'device_errors', where: sql<boolean>`source = 'device' and level = 'error'` })
