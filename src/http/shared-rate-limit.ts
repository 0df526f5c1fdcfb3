import { AppError } from '../errors.js'
import type { DatabaseClock } from '../storage/database-clock.js'
import type { Db } from '../storage/storage.js'

/**
 * A sliding-window limit counted in the database, so every instance sees every hit: at most
 * `limit` hits per key within `windowMs`, counting refused ones.
 *
 * Each hit is committed first and counted after: a hit whose commit is the (limit+1)-th in the
 * window sees at least limit+1 rows, so concurrent hits on several instances cannot all pass.
 */
export class SharedRateLimit {
  constructor(
    private readonly db: Db,
    /** Separates limits sharing the table. */
    private readonly scope: string,
    private readonly limit: number,
    private readonly windowMs: number,
    /** Every instance counts hits in the same window: the hits' times are the database's clock. */
    private readonly clock: DatabaseClock,
  ) {}

  /** Counts one hit of `key`; throws 429 `rate_limited` (with `retry_after` seconds) past the limit. */
  async hit(key: string, message: string): Promise<void> {
    const now = Math.round((await this.clock.read(this.db)) * 1000)
    const scoped = `${this.scope}:${key}`
    await this.db.insertInto('rate_hits').values({ key: scoped, at: now }).execute()
    const recent = await this.db
      .selectFrom('rate_hits')
      .select('at')
      .where('key', '=', scoped)
      .where('at', '>', now - this.windowMs)
      .orderBy('at', 'desc')
      .limit(this.limit + 1)
      .execute()
    if (Math.random() < 0.05) await this.prune(now)
    if (recent.length <= this.limit) return
    const leaves = Number(recent[this.limit - 1]!.at) + this.windowMs
    throw new AppError('rate_limited', message, { retry_after: Math.max(1, Math.ceil((leaves - now) / 1000)) })
  }

  /** Old hits say nothing any more; dropping them now and then keeps the table small. */
  private async prune(now: number): Promise<void> {
    await this.db
      .deleteFrom('rate_hits')
      .where('at', '<=', now - this.windowMs)
      .where('key', 'like', `${this.scope}:%`)
      .execute()
  }
}
