/**
 * Passes on whole percentages at most once per `intervalMs`: always the first one and 100, never
 * the same value twice in a row, nothing after `stop()`.
 */
export class ProgressThrottle {
  private last: number | undefined
  private lastAt = Number.NEGATIVE_INFINITY
  private stopped = false

  constructor(
    private readonly intervalMs: number,
    private readonly report: (percent: number) => void,
    private readonly now: () => number = Date.now,
  ) {}

  update(percent: number): void {
    if (this.stopped || !Number.isFinite(percent)) return
    const value = Math.min(100, Math.max(0, Math.floor(percent)))
    if (value === this.last) return
    const at = this.now()
    if (value !== 100 && at - this.lastAt < this.intervalMs) return
    this.last = value
    this.lastAt = at
    this.report(value)
  }

  stop(): void {
    this.stopped = true
  }
}
