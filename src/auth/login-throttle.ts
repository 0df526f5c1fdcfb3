import { AppError } from '../errors.js'
import type { Db } from '../storage/storage.js'

/**
 * Limits login attempts per key (client address + username): past `limit` failures within the
 * window every attempt for that key is refused, even one with the right password.
 *
 * Atomic by construction: `claim` counts the attempt and reads the count back in one statement
 * (INSERT … ON CONFLICT DO UPDATE … RETURNING), so concurrent attempts on any number of
 * instances each see a distinct count and at most `limit` of them go on to check credentials.
 * A successful login resets the key; an attempt that turns out not to be a wrong credential
 * (device offline, time-out) is given back with `release`.
 */
export class LoginThrottle {
  constructor(
    private readonly db: Db,
    /** Separates gateway logins from device logins. */
    private readonly scope: string,
    private readonly limit = 10,
    private readonly windowMs = 15 * 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts an attempt; throws 429 `rate_limited` (the error handler adds `Retry-After`) past the limit. */
  async claim(key: string, message: string): Promise<void> {
    const now = this.now()
    const expired = now - this.windowMs
    const row = await this.db
      .insertInto('login_counters')
      .values({ key: this.scoped(key), failures: 1, window_start: now })
      .onConflict((oc) =>
        oc.column('key').doUpdateSet((eb) => {
          // Right-hand sides see the row as it was, so both columns test the same condition.
          const stale = eb('login_counters.window_start', '<=', expired)
          return {
            failures: eb.case().when(stale).then(1).else(eb('login_counters.failures', '+', 1)).end(),
            window_start: eb.case().when(stale).then(now).else(eb.ref('login_counters.window_start')).end(),
          }
        }),
      )
      .returning(['failures', 'window_start'])
      .executeTakeFirstOrThrow()
    if (Number(row.failures) <= this.limit) return
    const wait = Math.max(1, Math.ceil((Number(row.window_start) + this.windowMs - now) / 1000))
    throw new AppError('rate_limited', message, { retry_after: wait })
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
    await this.db.deleteFrom('login_counters').where('window_start', '<=', this.now() - this.windowMs).execute()
  }

  private scoped(key: string): string {
    return `${this.scope}:${key}`
  }
}

export const throttleKey = (address: string, username: string) => JSON.stringify([address, username])
