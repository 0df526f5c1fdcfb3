import { sql, type RawBuilder } from 'kysely'
import { AppError } from '../errors.js'
import { epochMillis, type DatabaseClock } from '../storage/database-clock.js'
import type { Db, Storage } from '../storage/storage.js'
import { clientAddressKey } from './client-address.js'

/**
 * Limits login attempts per key (client address + username): past `limit` failures within the
 * window every attempt for that key is refused, even one with the right password.
 *
 * Atomic by construction: `claim` counts the attempt and reads the count back in one statement
 * (INSERT … ON CONFLICT DO UPDATE … RETURNING), so concurrent attempts on any number of
 * instances each see a distinct count and at most `limit` of them go on to check credentials.
 * A successful login resets the key; an attempt that turns out not to be a wrong credential
 * (device offline, time-out) is given back with `release`.
 *
 * Windows are on the database's clock (`storage.clock`, epoch milliseconds): one instance opens
 * a window and the others count into it and end it, so hosts whose clocks disagree must neither
 * restart a window early nor keep it open late (docs/coordination.md, rule 3).
 */
export class LoginThrottle {
  private readonly db: Db
  /** The database's clock (tests give one they set). */
  private readonly clock: DatabaseClock

  constructor(
    storage: Pick<Storage, 'db' | 'clock'>,
    /** Separates gateway logins from device logins. */
    private readonly scope: string,
    private readonly limit = 10,
    private readonly windowMs = 15 * 60_000,
  ) {
    this.db = storage.db
    this.clock = storage.clock
    if (windowMs > LOGIN_COUNTER_MAX_WINDOW_MS) throw new RangeError(`a login throttle window is at most ${LOGIN_COUNTER_MAX_WINDOW_MS} ms (the retention job prunes older counters)`)
  }

  /** Counts an attempt; throws 429 `rate_limited` (the error handler adds `Retry-After`) past the limit. */
  async claim(key: string, message: string): Promise<void> {
    const now = epochMillis(this.clock)
    const row = await this.db
      .insertInto('login_counters')
      .values({ key: this.scoped(key), failures: 1, window_start: now })
      .onConflict((oc) =>
        oc.column('key').doUpdateSet((eb) => {
          // Right-hand sides see the row as it was, so both columns test the same condition.
          const stale = eb('login_counters.window_start', '<=', this.windowStartedBy(now))
          return {
            failures: eb.case().when(stale).then(1).else(eb('login_counters.failures', '+', 1)).end(),
            window_start: eb.case().when(stale).then(now).else(eb.ref('login_counters.window_start')).end(),
          }
        }),
      )
      .returning(['failures', 'window_start', now.as('now')])
      .executeTakeFirstOrThrow()
    if (Number(row.failures) <= this.limit) return
    const wait = Math.max(1, Math.ceil((Number(row.window_start) + this.windowMs - Number(row.now)) / 1000))
    throw new AppError('rate_limited', message, { retry_after: wait })
  }

  /**
   * Refuses (429 `rate_limited`) while `key` has `limit` failures or more in a window that has not
   * ended; counts nothing. For checks where only failures count: call it before testing the
   * credentials (so a limited client learns nothing from the answer) and `claim` after a failure.
   */
  async refuseWhileLimited(key: string, message: string): Promise<void> {
    const now = epochMillis(this.clock)
    const row = await this.db
      .selectFrom('login_counters')
      .select(['failures', 'window_start', now.as('now')])
      .where('key', '=', this.scoped(key))
      .executeTakeFirst()
    if (!row || Number(row.failures) < this.limit) return
    const wait = Math.ceil((Number(row.window_start) + this.windowMs - Number(row.now)) / 1000)
    if (wait > 0) throw new AppError('rate_limited', message, { retry_after: wait })
  }

  /** The claimed attempt did not test the credentials after all: it does not count. */
  async release(key: string): Promise<void> {
    await this.db
      .updateTable('login_counters')
      .set((eb) => ({ failures: eb('failures', '-', 1) }))
      .where('key', '=', this.scoped(key))
      .where('failures', '>', 0)
      .execute()
  }

  /** Right credentials: the key starts afresh (expired keys of others are dropped on the way). */
  async succeed(key: string): Promise<void> {
    await this.db.deleteFrom('login_counters').where('key', '=', this.scoped(key)).execute()
    await this.db.deleteFrom('login_counters').where('window_start', '<=', this.windowStartedBy(epochMillis(this.clock))).execute()
  }

  /** A window that started at or before this time has ended at `now`. */
  private windowStartedBy(now: RawBuilder<number>): RawBuilder<number> {
    return sql<number>`(${now} - ${this.windowMs})`
  }

  private scoped(key: string): string {
    return `${this.scope}:${key}`
  }
}

/** The key of a (client address, username) pair; IPv6 addresses count by their /64 (`clientAddressKey`). */
export const throttleKey = (address: string, username: string) => JSON.stringify([clientAddressKey(address), username])

/**
 * The longest window any LoginThrottle keeps: a counter row whose window started longer ago says
 * nothing any more, and the retention job deletes it (`pruneLoginCounters`).
 */
export const LOGIN_COUNTER_MAX_WINDOW_MS = 60 * 60_000

/** Deletes the counters whose window ended (on the database's clock); returns how many. */
export async function pruneLoginCounters(db: Db, clock: DatabaseClock): Promise<number> {
  const result = await db
    .deleteFrom('login_counters')
    .where('window_start', '<=', sql<number>`(${epochMillis(clock)} - ${LOGIN_COUNTER_MAX_WINDOW_MS})`)
    .executeTakeFirst()
  return Number(result.numDeletedRows)
}
