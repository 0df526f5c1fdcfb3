export interface BackoffOptions {
  /** First delay ceiling in ms (default 500). */
  baseMs?: number
  /** Largest delay ceiling in ms (default 30 000). */
  capMs?: number
  /** Uniform random source in [0, 1); injectable for tests. */
  random?: () => number
}

/**
 * Exponential back-off with full jitter: the n-th retry waits a uniform random time in
 * [0, min(cap, base · 2ⁿ)). Full jitter spreads a fleet that lost the gateway at the same moment.
 */
export class Backoff {
  private attempt = 0
  private readonly baseMs: number
  private readonly capMs: number
  private readonly random: () => number

  constructor(options: BackoffOptions = {}) {
    this.baseMs = options.baseMs ?? 500
    this.capMs = options.capMs ?? 30_000
    this.random = options.random ?? Math.random
    if (!(this.baseMs > 0) || !(this.capMs >= this.baseMs)) throw new RangeError('back-off needs 0 < baseMs ≤ capMs')
  }

  /** The delay before the next attempt; each call grows the ceiling until the cap. */
  next(): number {
    const ceiling = Math.min(this.capMs, this.baseMs * 2 ** Math.min(this.attempt, 30))
    this.attempt++
    return Math.floor(this.random() * ceiling)
  }

  /**
   * The delay after the gateway refused what this device sent (close 4400, 1009): never below
   * the base, so a device cannot come back at once and send the same thing again.
   */
  nextAfterRefusal(): number {
    return Math.max(this.baseMs, this.next())
  }

  reset(): void {
    this.attempt = 0
  }
}
