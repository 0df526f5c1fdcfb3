import { sql, type Insertable, type Selectable } from 'kysely'
import type { Database } from '../../storage/database.js'
import type { Db, Dialect, Tx } from '../../storage/storage.js'
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
 * Device logs and operation logs, one table, listed newest first by id. Writes entries as they
 * are (operation logs; a device's own go through `insertDeviceLogBatch`). Device errors are added
 * to the summary's tallies: pass a transaction when there are any.
 */
export async function insertLogs(db: Db | Tx, entries: NewLog[]): Promise<void> {
  for (let start = 0; start < entries.length; start += CHUNK_ROWS) {
    await db.insertInto('platform_logs').values(entries.slice(start, start + CHUNK_ROWS)).execute()
  }
  await tally(db, 'device_errors', entries.filter(isDeviceError).map((e) => e.ts))
}

/**
 * A device's own entries, written only while the device exists: each INSERT takes its rows from
 * a VALUES list where the device's row exists, on PostgreSQL locked FOR KEY SHARE, so a delete
 * under way is waited for (and then nothing is written) and a later one waits for this commit
 * and removes the entries with the device. One statement; a transaction when there are device
 * errors (the tallies) or more than one INSERT. Resolves after the commit: false when the
 * device does not exist (nothing written).
 */
export async function insertDeviceLogBatch(db: Db, dialect: Dialect, deviceId: string, entries: NewLog[]): Promise<boolean> {
  if (entries.length === 0) return true
  if (entries.length <= CHUNK_ROWS && !entries.some(isDeviceError)) return (await insertWhileDeviceExists(db, dialect, deviceId, entries)) > 0
  return db.transaction().execute(async (tx) => {
    for (let start = 0; start < entries.length; start += CHUNK_ROWS) {
      // The first INSERT found the device and holds it (PostgreSQL's lock, SQLite's write lock) until the commit.
      if ((await insertWhileDeviceExists(tx, dialect, deviceId, entries.slice(start, start + CHUNK_ROWS))) === 0) return false
    }
    await tally(tx, 'device_errors', entries.filter(isDeviceError).map((e) => e.ts))
    return true
  })
}

async function insertWhileDeviceExists(db: Db | Tx, dialect: Dialect, deviceId: string, entries: NewLog[]): Promise<number> {
  const device = db
    .selectFrom('platform_devices')
    .select('device_id')
    .where('device_id', '=', deviceId)
    .$if(dialect === 'postgres', (q) => q.forKeyShare())
  // VALUES names its columns column1…column6 on both engines; ts cast, as a parameter there has no type on PostgreSQL.
  const rows = sql.join(entries.map((e) => sql`(${e.source}, ${e.device_id}, ${e.level}, ${e.tag ?? null}, ${e.message}, cast(${e.ts} as bigint))`))
  const result = await db
    .insertInto('platform_logs')
    .columns(['source', 'device_id', 'level', 'tag', 'message', 'ts'])
    .expression(sql`select * from (values ${rows}) as v where exists ${device}`)
    .executeTakeFirst()
  return Number(result.numInsertedOrUpdatedRows ?? 0)
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
