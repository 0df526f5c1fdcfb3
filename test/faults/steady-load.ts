import { delay } from '../../src/lib/time.js'

/** One answer of the load: when it was sent and answered, its status and, for errors, the contract's fields. */
export interface Outcome {
  kind: string
  sentAt: number
  answeredAt: number
  /** 0: no HTTP answer at all (connection refused or reset, or no answer within 15 s). */
  status: number
  error?: string
  success?: boolean
  message?: unknown
  retryAfter: string | null
  /** What the sender attached (a sequence number). */
  tag?: number
}

export type Send = (tag: number) => Promise<Response>

/**
 * Light steady load: each kind of request is sent one at a time, paced every `everyMs`, until
 * `stop`; every answer is recorded with its timing. Nothing here waits for a condition: the
 * test polls the outcomes.
 */
export class SteadyLoad {
  readonly outcomes: Outcome[] = []
  private running = true
  private readonly loops: Promise<void>[] = []

  add(kind: string, everyMs: number, send: Send): void {
    this.loops.push(this.loop(kind, everyMs, send))
  }

  /** Stops sending and waits for the answers under way. */
  async stop(): Promise<void> {
    this.running = false
    await Promise.all(this.loops)
  }

  of(kind: string, where: (o: Outcome) => boolean = () => true): Outcome[] {
    return this.outcomes.filter((o) => o.kind === kind && where(o))
  }

  /** Outcomes of `kind` by status, e.g. `{200: 41, 503: 12}`. */
  statuses(kind: string): Record<number, number> {
    const counts: Record<number, number> = {}
    for (const o of this.of(kind)) counts[o.status] = (counts[o.status] ?? 0) + 1
    return counts
  }

  private async loop(kind: string, everyMs: number, send: Send): Promise<void> {
    for (let tag = 0; this.running; tag++) {
      const sentAt = Date.now()
      this.outcomes.push(await answer(kind, tag, sentAt, send))
      await delay(everyMs)
    }
  }
}

async function answer(kind: string, tag: number, sentAt: number, send: Send): Promise<Outcome> {
  try {
    const res = await send(tag)
    const text = await res.text()
    const outcome: Outcome = { kind, tag, sentAt, answeredAt: Date.now(), status: res.status, retryAfter: res.headers.get('retry-after') }
    if (res.status >= 400) {
      try {
        const body = JSON.parse(text) as { error?: string; success?: boolean; message?: unknown }
        Object.assign(outcome, { error: body.error, success: body.success, message: body.message })
      } catch {
        outcome.error = `(not JSON) ${text.slice(0, 80)}`
      }
    }
    return outcome
  } catch (err) {
    return { kind, tag, sentAt, answeredAt: Date.now(), status: 0, error: (err as Error).message, retryAfter: null }
  }
}

/** The refusal the contract promises for a dependency outage: 503, its error body, a Retry-After in seconds. */
export function isServiceUnavailable(o: Outcome): boolean {
  return o.status === 503 && o.error === 'service_unavailable' && o.success === false && typeof o.message === 'string' && /^[1-9]\d*$/.test(o.retryAfter ?? '')
}

/** The outcomes since 1 s before `t0`, times relative to it: what a failing test prints. */
export function timeline(load: SteadyLoad, t0: number): string {
  return JSON.stringify(load.outcomes.filter((o) => o.sentAt >= t0 - 1000).map((o) => [o.kind, o.sentAt - t0, o.answeredAt - t0, o.status, o.error ?? '']))
}
