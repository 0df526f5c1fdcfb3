/** How far out of order a sender's messages may arrive on one subscription (NATS keeps one publisher's order: a margin). */
export const REPLAY_WINDOW = 1024
const WORDS = REPLAY_WINDOW / 32

interface SenderWindow {
  /** The highest message number accepted from this sender. */
  top: number
  /** Which of the numbers top − REPLAY_WINDOW + 1 … top were accepted, bit (n mod REPLAY_WINDOW). */
  seen: Uint32Array
  /** When (on `now`) a message of this sender was last accepted. */
  lastSeen: number
}

/**
 * The messages one subscription already accepted, so a copy of a signed message replayed within
 * the signature's time window is refused (contract §17: the bus is authenticated). Every signed
 * message carries `<sender>.<n>`: a random id of the signing connection and a number that grows
 * by one with each message it signs (`BusSigner`). Per sender the guard keeps the highest number
 * accepted and a sliding bitmap of the `REPLAY_WINDOW` numbers below it, like IPsec's anti-replay
 * window: a number seen, or older than the window, is refused. Memory: about 150 bytes per sender
 * heard on the subscription; a sender silent for `forgetAfterMs` (twice the signature window: every
 * message it signed is stale by then) is dropped.
 *
 * A retried request is a new message with a new number, so it goes through; only byte-for-byte
 * copies are refused.
 */
export class ReplayGuard {
  private readonly senders = new Map<string, SenderWindow>()
  private lastSweep: number

  constructor(
    private readonly forgetAfterMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.lastSweep = now()
  }

  /** True the first time `id` (`<sender>.<n base 36>`) is offered; false for a copy, an old number or a malformed id. */
  fresh(id: string): boolean {
    const dot = id.lastIndexOf('.')
    if (dot <= 0) return false
    const sender = id.slice(0, dot)
    const n = parseInt(id.slice(dot + 1), 36)
    if (!Number.isSafeInteger(n) || n < 1) return false
    const now = this.now()
    if (now - this.lastSweep > this.forgetAfterMs) this.sweep(now)
    const w = this.senders.get(sender)
    if (!w) {
      const seen = new Uint32Array(WORDS)
      mark(seen, n)
      this.senders.set(sender, { top: n, seen, lastSeen: now })
      return true
    }
    if (n > w.top) {
      if (n - w.top >= REPLAY_WINDOW) w.seen.fill(0)
      else for (let i = w.top + 1; i <= n; i++) clear(w.seen, i)
      w.top = n
    } else if (n <= w.top - REPLAY_WINDOW || isMarked(w.seen, n)) {
      return false
    }
    mark(w.seen, n)
    w.lastSeen = now
    return true
  }

  /** Senders remembered (tests read it). */
  get size(): number {
    return this.senders.size
  }

  private sweep(now: number): void {
    this.lastSweep = now
    for (const [sender, w] of this.senders) if (now - w.lastSeen > this.forgetAfterMs) this.senders.delete(sender)
  }
}

const bit = (n: number) => n % REPLAY_WINDOW
const mark = (seen: Uint32Array, n: number) => (seen[bit(n) >>> 5]! |= 1 << (bit(n) & 31))
const clear = (seen: Uint32Array, n: number) => (seen[bit(n) >>> 5]! &= ~(1 << (bit(n) & 31)))
const isMarked = (seen: Uint32Array, n: number) => (seen[bit(n) >>> 5]! & (1 << (bit(n) & 31))) !== 0
