export interface CallBatcherOptions {
  /** Most calls in one batch. */
  maxBatch: number
  /** Batches running at once; calls made meanwhile wait and go together in the next. */
  concurrency: number
  /**
   * How long a call may wait for others to join its batch when a batch could start at once
   * (ms; 0, the default: only the calls of the same turn of the event loop). A batch starts
   * when its oldest call has waited this long or it is full. At a steady trickle of calls (a
   * few hundred registrations a second on an instance) a statement per call is what the
   * database spends most on; a few milliseconds of waiting make one statement of many.
   */
  lingerMs?: number
}

/** What a batch knows of its calls: the earliest deadline among them (`performance.now()` ms; Infinity: none). */
export interface BatchContext {
  deadline: number
}

/** A call whose deadline passed before its batch started: it was never run. */
export class CallExpired extends Error {
  constructor() {
    super('the call expired before its batch started; it was not run')
    this.name = 'CallExpired'
  }
}

interface Pending<In, Out> {
  input: In
  deadline: number
  /** When the call was made (`performance.now()` ms). */
  madeAt: number
  resolve(output: Out): void
  reject(err: unknown): void
}

/**
 * Groups calls made close together into one call of `run` with all their inputs: the calls of
 * one turn of the event loop go together, and while `concurrency` batches run, later calls
 * gather for the next. A fleet re-linking after a restart then costs the database one statement
 * per batch instead of one per device. `run` answers each input at its position; when it
 * fails, every call of its batch fails with that error. A call may carry a deadline: one still
 * waiting when it passes is dropped, never run, and `run` is told the earliest deadline of its
 * batch so it can bound its own work by it.
 */
export class CallBatcher<In, Out> {
  private queue: Pending<In, Out>[] = []
  private scheduled = false
  /** The start waiting for the oldest call's linger to end; cleared when the batch fills first. */
  private lingering: NodeJS.Timeout | undefined
  private running = 0

  constructor(
    private readonly run: (inputs: In[], batch: BatchContext) => Promise<Out[]>,
    private readonly options: CallBatcherOptions,
  ) {}

  call(input: In, deadline = Infinity): Promise<Out> {
    return new Promise<Out>((resolve, reject) => {
      this.queue.push({ input, deadline, madeAt: performance.now(), resolve, reject })
      this.schedule()
    })
  }

  private schedule(): void {
    if (this.running >= this.options.concurrency || this.queue.length === 0) return
    if (this.lingering && this.queue.length >= this.options.maxBatch) {
      clearTimeout(this.lingering)
      this.lingering = undefined
      this.scheduled = false
    }
    if (this.scheduled) return
    this.scheduled = true
    const go = () => {
      this.lingering = undefined
      this.scheduled = false
      this.start()
    }
    const wait = this.lingerLeft()
    if (wait > 0) this.lingering = setTimeout(go, wait)
    else setImmediate(go)
  }

  /** How long the waiting calls may still wait for company: 0 once the queue fills a batch or its oldest call has lingered enough. */
  private lingerLeft(): number {
    const { lingerMs = 0, maxBatch } = this.options
    if (lingerMs <= 0 || this.queue.length >= maxBatch) return 0
    return Math.max(0, lingerMs - (performance.now() - this.queue[0]!.madeAt))
  }

  /** Starts batches while slots are free: the first because its time came, the others only once due; the rest is scheduled. */
  private start(): void {
    let first = true
    while (this.running < this.options.concurrency && this.queue.length > 0 && (first || this.lingerLeft() === 0)) {
      first = false
      const now = performance.now()
      const batch: Pending<In, Out>[] = []
      while (batch.length < this.options.maxBatch && this.queue.length > 0) {
        const next = this.queue.shift()!
        if (next.deadline <= now) next.reject(new CallExpired())
        else batch.push(next)
      }
      if (batch.length === 0) continue
      this.running++
      this.runBatch(batch).finally(() => {
        this.running--
        this.schedule()
      })
    }
    this.schedule()
  }

  private async runBatch(batch: Pending<In, Out>[]): Promise<void> {
    try {
      const deadline = Math.min(...batch.map((p) => p.deadline))
      const outputs = await this.run(
        batch.map((p) => p.input),
        { deadline },
      )
      if (outputs.length !== batch.length) throw new Error(`a batch of ${batch.length} calls got ${outputs.length} answers`)
      batch.forEach((p, i) => p.resolve(outputs[i] as Out))
    } catch (err) {
      for (const p of batch) p.reject(err)
    }
  }
}
