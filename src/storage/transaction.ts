import type { Db } from './storage.js'

/**
 * Runs `fn` in the caller's transaction when `db` is one, else in a new one: a decision and its
 * consequences (state change, release activation, audit record) compose into one commit.
 */
export function inTransaction<T>(db: Db, fn: (trx: Db) => Promise<T>): Promise<T> {
  return db.isTransaction ? fn(db) : db.transaction().execute(fn)
}

/**
 * Runs a whole transaction again when it fails, up to `attempts` times: for writes that can lose a
 * race on a unique index to a concurrent one (two activations at once). Inside a caller's
 * transaction it runs once: the caller's transaction is what would have to start again.
 */
export async function transactionWithRetries<T>(db: Db, fn: (trx: Db) => Promise<T>, attempts = 4): Promise<T> {
  if (db.isTransaction) return fn(db)
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction().execute(fn)
    } catch (err) {
      if (attempt >= attempts) throw err
    }
  }
}
