/**
 * Runs `pass` every `intervalMs`, never two at once: a tick that finds a pass still running is
 * skipped. `stop` clears the timer, aborts the pass's signal and waits for it to end.
 */
export class PeriodicTask {
  private timer: NodeJS.Timeout | undefined
  private running: Promise<void> | undefined
  /** A pass was asked for while one ran: run another right after it. */
  private again = false
  private readonly abort = new AbortController()

  constructor(
    private readonly pass: (signal: AbortSignal) => Promise<unknown>,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** Starts the timer (unref'd: it never keeps the process alive); `immediately` runs a first pass now. */
  start(intervalMs: number, { immediately = false } = {}): void {
    if (this.timer || this.abort.signal.aborted) return
    this.timer = setInterval(() => this.tick(), intervalMs)
    this.timer.unref()
    if (immediately) this.tick()
  }

  /** Runs a pass now, or right after the running one ends. */
  runSoon(): void {
    if (this.running) this.again = true
    else this.tick()
  }

  async stop(): Promise<void> {
    clearInterval(this.timer)
    this.abort.abort()
    await this.running
  }

  private tick(): void {
    if (this.running || this.abort.signal.aborted) return
    this.running = this.pass(this.abort.signal)
      .then(() => undefined, this.onError)
      .finally(() => {
        this.running = undefined
        if (this.again && this.timer) {
          this.again = false
          this.tick()
        }
      })
  }
}
