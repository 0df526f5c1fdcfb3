import { AppError } from '../errors.js'

const MAX_KEYS = 100_000

/**
 * Counts failed logins per key (client address + username) in a sliding window. Past the
 * limit every attempt for that key is refused until the oldest failure leaves the window.
 * Kept in memory: each instance throttles what it sees.
 */
export class LoginThrottle {
  private readonly failures = new Map<string, number[]>()

  constructor(
    private readonly limit = 10,
    private readonly windowMs = 15 * 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Seconds to wait when the key is limited, else 0. */
  retryAfter(key: string): number {
    const times = this.recent(key)
    if (times.length < this.limit) return 0
    const oldest = times[times.length - this.limit]!
    return Math.max(1, Math.ceil((oldest + this.windowMs - this.now()) / 1000))
  }

  /** Throws 429 `rate_limited` (the error handler adds `Retry-After`) while the key is limited. */
  assertAllowed(key: string, message: string): void {
    const wait = this.retryAfter(key)
    if (wait > 0) throw new AppError('rate_limited', message, { retry_after: wait })
  }

  fail(key: string): void {
    const times = this.recent(key)
    times.push(this.now())
    this.failures.delete(key)
    this.failures.set(key, times)
    if (this.failures.size > MAX_KEYS) {
      const first = this.failures.keys().next().value
      if (first !== undefined) this.failures.delete(first)
    }
  }

  succeed(key: string): void {
    this.failures.delete(key)
  }

  private recent(key: string): number[] {
    const cutoff = this.now() - this.windowMs
    const times = (this.failures.get(key) ?? []).filter((t) => t > cutoff)
    if (times.length === 0) this.failures.delete(key)
    return times
  }
}

export const throttleKey = (address: string, username: string) => `${address}\u0000${username}`
