/** Request loops of the data benchmark, each bounded by a count and a time, and their percentiles. */

export interface Latencies {
  /** Milliseconds of the answered requests, sorted. */
  ms: number[]
  failed: number
  /** Requests a steady loop could not send on time (too many in flight). */
  skipped: number
}

/** The middle value (the upper one of an even count); the input is left as it is. */
export const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

export const percentile = (sorted: number[], p: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!

export interface Request {
  path: string
  method?: 'GET' | 'POST'
  body?: string
  headers?: Record<string, string>
}

async function timed(base: string, r: Request): Promise<number | undefined> {
  const started = performance.now()
  try {
    const answer = await fetch(base + r.path, { method: r.method ?? 'GET', headers: r.headers, body: r.body })
    await answer.arrayBuffer()
    return answer.ok ? performance.now() - started : undefined
  } catch {
    return undefined
  }
}

const finish = (ms: number[], failed: number, skipped = 0): Latencies => ({ ms: ms.sort((a, b) => a - b), failed, skipped })

/** `count` requests from `next`, `concurrency` at a time, stopping early after `seconds`. */
export async function closedLoop(base: string, next: () => Request, opts: { count: number; concurrency: number; seconds: number }): Promise<Latencies> {
  const ms: number[] = []
  let failed = 0
  let sent = 0
  const deadline = performance.now() + opts.seconds * 1000
  const worker = async () => {
    while (sent < opts.count && performance.now() < deadline) {
      sent++
      const t = await timed(base, next())
      if (t === undefined) failed++
      else ms.push(t)
    }
  }
  await Promise.all(Array.from({ length: opts.concurrency }, worker))
  return finish(ms, failed)
}

const TICK_MS = 10

/**
 * Requests at a fixed rate (open loop: a slow answer does not slow the sending), until `until`
 * resolves or `seconds` pass, at most `maxInFlight` at once; then waits for those in flight.
 */
export async function steadyLoop(
  base: string,
  next: () => Request,
  opts: { perSecond: number; seconds: number; maxInFlight: number; until?: Promise<unknown> },
): Promise<Latencies> {
  const ms: number[] = []
  let failed = 0
  let skipped = 0
  let inFlight = 0
  let done = false
  void opts.until?.then(() => (done = true), () => (done = true))
  const started = performance.now()
  const pending = new Set<Promise<void>>()
  let sent = 0
  while (!done && performance.now() - started < opts.seconds * 1000) {
    const due = Math.floor(((performance.now() - started) / 1000) * opts.perSecond)
    for (; sent < due; sent++) {
      if (inFlight >= opts.maxInFlight) {
        skipped++
        continue
      }
      inFlight++
      const p: Promise<void> = timed(base, next()).then((t) => {
        inFlight--
        pending.delete(p)
        if (t === undefined) failed++
        else ms.push(t)
      })
      pending.add(p)
    }
    await new Promise((resolve) => setTimeout(resolve, TICK_MS))
  }
  await Promise.all(pending)
  return finish(ms, failed, skipped)
}
