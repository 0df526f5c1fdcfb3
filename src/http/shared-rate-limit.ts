import { AppError } from '../errors.js'
import type { DatabaseClock } from '../storage/database-clock.js'
import type { Db } from '../storage/storage.js'

/** The longest window of any SharedRateLimit: older hits count for none, and the retention job deletes them. */
export const RATE_HIT_MAX_WINDOW_MS = 60 * 60_000

/** Deletes the hits older than every window (on the database's clock); returns how many. */
export async function pruneRateHits(db: Db, clock: DatabaseClock): Promise<number> {
  const now = Math.round((await clock.read(db)) * 1000)
  const result = await db.deleteFrom('rate_hits').where('at', '<=', now - RATE_HIT_MAX_WINDOW_MS).executeTakeFirst()
  return Number(result.numDeletedRows)
}

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
  ) {
    if (windowMs > RATE_HIT_MAX_WINDOW_MS) throw new RangeError(`a shared rate limit window is at most ${RATE_HIT_MAX_WINDOW_MS} ms (the retention job prunes older hits)`)
  }

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
