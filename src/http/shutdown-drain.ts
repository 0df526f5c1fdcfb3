import type { FastifyRequest } from 'fastify'

export interface DrainSettings {
  /** Longest drain (`SHUTDOWN_DRAIN_SECONDS`); 0: no drain, SIGTERM closes the listener at once. */
  maxMs: number
  /** "draining" answers every health checker must have had for the drain to end early (`SHUTDOWN_DRAIN_CHECKS`). */
  checks: number
}

/** How a drain ended: not configured, every health checker told often enough, or its time limit. */
export type DrainEnd = 'none' | 'checked' | 'time'

/**
 * The drain between SIGTERM and the listener closing (docs/deploy.md, "Rolling restart").
 *
 * Closing a listening socket resets the connections still in its accept queue, after the load
 * balancer may have written a request on them; it never resends a POST, and answers it itself.
 * So the load balancer must stop sending first: from SIGTERM on, `/readyz` answers 503
 * `"status":"draining"` while every request is still served as usual, and the listener closes
 * only once the balancer has taken the instance out.
 *
 * When that happened is known without guessing: a health checker (HAProxy's `option httpchk`)
 * marks an instance down after `fall` failed checks and sends its next check only after it has
 * processed the previous one, so a checker that got `checks` (= fall + 1) "draining" answers has
 * already taken the instance out. The health checkers are the peers (socket addresses) that asked
 * `/readyz` directly (no `X-Forwarded-For`/`Forwarded`: not a client's request passed on by a
 * proxy) during the `maxMs` before the SIGTERM. The drain ends once each of them has had `checks`
 * "draining" answers, and after `maxMs` at the latest (a checker that went away, or none known).
 */
export class ShutdownDrain {
  private draining = false
  /** Peer → when it last asked /readyz, oldest first (re-inserted on each ask). */
  private readonly lastAsked = new Map<string, number>()
  /** While draining: "draining" answers per peer. */
  private readonly answered = new Map<string, number>()
  private onAnswer: (() => void) | undefined
  private ended: DrainEnd | undefined

  constructor(private readonly settings: DrainSettings) {}

  /** True from the start of the drain on: /readyz answers 503 "draining". */
  get isDraining(): boolean {
    return this.draining
  }

  /** How the drain ended; undefined before it did. */
  get end(): DrainEnd | undefined {
    return this.ended
  }

  /** Called by /readyz for every request; true when it must answer "draining". */
  readinessAsked(request: FastifyRequest): boolean {
    if (this.settings.maxMs <= 0) return false
    const peer = request.socket.remoteAddress
    const proxied = request.headers['x-forwarded-for'] !== undefined || request.headers.forwarded !== undefined
    if (peer === undefined || proxied) return this.draining
    if (this.draining) {
      this.answered.set(peer, (this.answered.get(peer) ?? 0) + 1)
      this.onAnswer?.()
      return true
    }
    const now = Date.now()
    this.lastAsked.delete(peer)
    this.lastAsked.set(peer, now)
    for (const [old, at] of this.lastAsked) {
      if (at >= now - this.settings.maxMs) break
      this.lastAsked.delete(old)
    }
    return false
  }

  /**
   * Starts draining and resolves once it is over (at once when no drain is configured); `log`
   * hears which checkers it waits for.
   */
  async drain(log?: (checkers: string[]) => void): Promise<DrainEnd> {
    const { maxMs, checks } = this.settings
    if (maxMs <= 0) return (this.ended = 'none')
    this.draining = true
    const since = Date.now() - maxMs
    const checkers = [...this.lastAsked].filter(([, at]) => at >= since).map(([peer]) => peer)
    log?.(checkers)
    const told = () => checkers.length > 0 && checkers.every((peer) => (this.answered.get(peer) ?? 0) >= checks)
    this.ended = await new Promise<DrainEnd>((resolve) => {
      const timer = setTimeout(() => resolve('time'), maxMs)
      this.onAnswer = () => {
        if (!told()) return
        clearTimeout(timer)
        resolve('checked')
      }
    })
    this.onAnswer = undefined
    return this.ended
  }
}
