/** Runs at most `limit` async jobs at once; the rest wait in arrival order. */
export class TaskQueue {
  private running = 0
  private readonly waiting: (() => Promise<void>)[] = []

  constructor(private readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError('concurrency limit must be a positive integer')
  }

  get active(): number {
    return this.running
  }

  get queued(): number {
    return this.waiting.length
  }

  /** Queues a job; it must not throw (failures are the job's own business). */
  push(job: () => Promise<void>): void {
    this.waiting.push(job)
    this.drain()
  }

  clear(): void {
    this.waiting.length = 0
  }

  private readonly finished = (): void => {
    this.running--
    this.drain()
  }

  private drain(): void {
    while (this.running < this.limit && this.waiting.length > 0) {
      const job = this.waiting.shift()!
      this.running++
      job().then(this.finished, this.finished)
    }
  }
}
