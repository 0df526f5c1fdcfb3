export interface CallBatcherOptions {
  /** Most calls in one batch. */
  maxBatch: number
  /** Batches running at once; calls made meanwhile wait and go together in the next. */
  concurrency: number
}

interface Pending<In, Out> {
  input: In
  resolve(output: Out): void
  reject(err: unknown): void
}

/**
 * Groups calls made close together into one call of `run` with all their inputs: the calls of
 * one turn of the event loop go together, and while `concurrency` batches run, later calls
 * gather for the next. A fleet re-linking after a restart then costs the database one statement
 * per batch instead of one per device. `run` answers each input at its position; when it
 * fails, every call of its batch fails with that error.
 */
export class CallBatcher<In, Out> {
  private queue: Pending<In, Out>[] = []
  private scheduled = false
  private running = 0

  constructor(
    private readonly run: (inputs: In[]) => Promise<Out[]>,
    private readonly options: CallBatcherOptions,
  ) {}

  call(input: In): Promise<Out> {
    return new Promise<Out>((resolve, reject) => {
      this.queue.push({ input, resolve, reject })
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
      const batch = this.queue.splice(0, this.options.maxBatch)
      this.running++
      this.runBatch(batch).finally(() => {
        this.running--
        this.schedule()
      })
    }
  }

  private async runBatch(batch: Pending<In, Out>[]): Promise<void> {
    try {
      const outputs = await this.run(batch.map((p) => p.input))
      if (outputs.length !== batch.length) throw new Error(`a batch of ${batch.length} calls got ${outputs.length} answers`)
      batch.forEach((p, i) => p.resolve(outputs[i] as Out))
    } catch (err) {
      for (const p of batch) p.reject(err)
    }
  }
}
