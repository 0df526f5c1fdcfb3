/**
 * At most `limit` tasks run at once and at most `maxQueued` wait for a turn; a task beyond that is
 * refused at once with `whenFull()` (it never runs), so memory and waiting time stay bounded when
 * work arrives faster than it can be done. Waiting tasks start in arrival order.
 */
export class ConcurrencyGate {
  private running = 0
  private readonly waiting: (() => void)[] = []

  constructor(
    readonly limit: number,
    readonly maxQueued: number,
    private readonly whenFull: () => Error,
  ) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`limit must be a positive integer, got ${limit}`)
    if (!Number.isInteger(maxQueued) || maxQueued < 0) throw new RangeError(`maxQueued must be a non-negative integer, got ${maxQueued}`)
  }

  /** Tasks running now. */
  get active(): number {
    return this.running
  }

  /** Tasks waiting for a turn now. */
  get queued(): number {
    return this.waiting.length
  }

  /** No task could wait now: `run` would refuse one. */
  get full(): boolean {
    return this.running >= this.limit && this.waiting.length >= this.maxQueued
  }

  /** The error a refused task gets. */
  refusal(): Error {
    return this.whenFull()
  }

  /** Runs `task` when a turn is free; rejects with `whenFull()` (without running it) when the queue is full. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.limit) {
      if (this.waiting.length >= this.maxQueued) throw this.whenFull()
      // The finishing task hands its turn over: `running` stays counted for us.
      await new Promise<void>((resolve) => this.waiting.push(resolve))
    } else {
      this.running++
    }
    try {
      return await task()
    } finally {
      const next = this.waiting.shift()
      if (next) next()
      else this.running--
    }
  }
}
