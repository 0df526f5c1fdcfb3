export interface CallBatcherOptions {
  /** Most calls in one batch. */
  maxBatch: number
  /** Batches running at once; calls made meanwhile wait and go together in the next. */
  concurrency: number
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
  private running = 0

  constructor(
    private readonly run: (inputs: In[], batch: BatchContext) => Promise<Out[]>,
    private readonly options: CallBatcherOptions,
  ) {}

  call(input: In, deadline = Infinity): Promise<Out> {
    return new Promise<Out>((resolve, reject) => {
      this.queue.push({ input, deadline, resolve, reject })
      this.schedule()
    })
  }

  private schedule(): void {
    if (this.scheduled || this.running >= this.options.concurrency || this.queue.length === 0) return
    this.scheduled = true
    setImmediate(() => {
      this.scheduled = false
      this.start()
    })
  }

  private start(): void {
    while (this.running < this.options.concurrency && this.queue.length > 0) {
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
