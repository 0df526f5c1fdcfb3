import { sql } from 'kysely'
import type { Db, Dialect } from './storage.js'

/** The first key of every lock taken here: keeps them apart from other advisory locks. */
const KEY_LOCK_CLASS = 0x6b6c // 'kl'

/**
 * Serializes the transactions that name the same `key` until each commits or rolls back: a
 * read-modify-write of rows derived from one machine's data (its production rollups) never
 * interleaves with another instance's. PostgreSQL: a transaction-level advisory lock on a hash of
 * the key (two keys hashing alike just wait for each other). SQLite: one writer at a time
 * already, nothing to take.
 */
export function keyLock(dialect: Dialect): (trx: Db, key: string) => Promise<void> {
  if (dialect === 'sqlite') return async () => {}
  return async (trx, key) => {
    await sql`select pg_advisory_xact_lock(${KEY_LOCK_CLASS}, hashtext(${key}))`.execute(trx)
  }
}
