import { sql } from 'kysely'
import type { DatabaseClock } from './database-clock.js'
import type { Db, Dialect } from './storage.js'

/** The first key of every lock taken here: keeps them apart from other advisory locks. */
const KEY_LOCK_CLASS = 0x6b6c // 'kl'

/**
 * Serializes the transactions that name the same key until each commits or rolls back, and
 * reads the database's clock once the locks are held, in one statement: a read-modify-write of
 * rows derived from one machine's data (its production rollups) never interleaves with another
 * instance's. PostgreSQL: a transaction-level advisory lock on a hash of the key (two keys
 * hashing alike just wait for each other). SQLite: one writer at a time already, nothing to take.
 */
export function keyLockThenClock(dialect: Dialect, clock: DatabaseClock): (trx: Db, keys: readonly string[]) => Promise<number> {
  if (dialect === 'sqlite') return async (trx) => Number((await sql<{ now: number }>`select ${clock.now} as now`.execute(trx)).rows[0]!.now)
  // Several keys are taken in the order of their lock ids, so two transactions never wait for each other in a cycle.
  return async (trx, keys) => {
    const ids = sql.join([...new Set(keys)].map((key) => sql`(${key})`))
    const { rows } = await sql<{ now: number }>`
      select ${clock.now} as now from (
        select count(*) as taken from (
          select pg_advisory_xact_lock(${KEY_LOCK_CLASS}, lock_id)
          from (select hashtext(key) as lock_id from (values ${ids}) as k(key) order by 1) as ordered
        ) as each_lock
      ) as locked`.execute(trx)
    return Number(rows[0]!.now)
  }
}
