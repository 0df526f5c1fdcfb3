import { AppError } from '../errors.js'
import type { Db } from '../storage/storage.js'

/**
 * Counts failed logins per key (client address + username) in a sliding window. Past the
 * limit every attempt for that key is refused until the oldest failure leaves the window.
 * Failures are stored in the database, so every instance enforces the same limit.
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

  /** Seconds to wait when the key is limited, else 0. */
  async retryAfter(key: string): Promise<number> {
    const now = this.now()
    const recent = await this.db
      .selectFrom('login_failures')
      .select('at')
      .where('key', '=', this.scoped(key))
      .where('at', '>', now - this.windowMs)
      .orderBy('at', 'desc')
      .limit(this.limit)
      .execute()
    if (recent.length < this.limit) return 0
    const oldest = recent[recent.length - 1]!.at
    return Math.max(1, Math.ceil((oldest + this.windowMs - now) / 1000))
  }

  /** Throws 429 `rate_limited` (the error handler adds `Retry-After`) while the key is limited. */
  async assertAllowed(key: string, message: string): Promise<void> {
    const wait = await this.retryAfter(key)
    if (wait > 0) throw new AppError('rate_limited', message, { retry_after: wait })
  }

  async fail(key: string): Promise<void> {
    const now = this.now()
    await this.db.insertInto('login_failures').values({ key: this.scoped(key), at: now }).execute()
    // Old failures say nothing any more; dropping them here keeps the table small.
    await this.db.deleteFrom('login_failures').where('at', '<=', now - this.windowMs).execute()
  }

  async succeed(key: string): Promise<void> {
    await this.db.deleteFrom('login_failures').where('key', '=', this.scoped(key)).execute()
  }

  private scoped(key: string): string {
    return `${this.scope}:${key}`
  }
}

export const throttleKey = (address: string, username: string) => JSON.stringify([address, username])
