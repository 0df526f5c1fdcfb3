import { randomBytes } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import type { Msg, NatsConnection, Subscription } from 'nats'
import { PeriodicTask } from '../lib/periodic-task.js'
import type { NatsConnectionWatch } from '../nats/connection-watch.js'

/**
 * Where instances say whether they have event listeners (open streams): every instance
 * subscribes, always. Signed with the cluster key like every bus message.
 */
export const INTEREST_SUBJECT = 'fleetgate.events.interest'

/** Default announcement period: an instance says where it stands this often. */
export const INTEREST_PERIOD_MS = 5000
/** An announcement is believed this many periods: an instance silent that long (dead) is forgotten. */
export const INTEREST_LIFETIME_PERIODS = 3
/**
 * After start (and after NATS reconnects) an instance publishes every event for this many
 * periods, whoever listens: within one period every instance with listeners has re-announced
 * (the second period is the margin for a late timer or a slow delivery).
 */
export const INTEREST_GRACE_PERIODS = 2
/** How long `acknowledged` waits for the other instances' acknowledgements (a stalled or dead instance). */
export const INTEREST_ACK_WAIT_MS = 2000
/**
 * After asking "who listens?" (start, NATS back), how long an instance takes the answers as the
 * list of instances there are: an announcement made meanwhile waits for the acknowledgements of
 * every instance that answered within it (they answer at once: a round trip).
 */
export const INTEREST_WHO_WAIT_MS = 500

/** What an instance says on INTEREST_SUBJECT. */
export interface InterestMessage {
  /** The sender (random, per bus). */
  instance: string
  /** Whether it has listeners (wants the events of the others). */
  listeners: boolean
  /** "Who listens?": every instance answers at once with its own state. */
  who?: true
  /** The sender is closing: forget it now. */
  gone?: true
  /** Acknowledge on the message's reply subject, naming this round. */
  round?: number
}

interface AckRound {
  round: number
  /** The instances that acknowledged it. */
  acked: Set<string>
  /** The instances waited for that have not acknowledged yet; null while this instance still learns who is there. */
  waiting: Set<string> | null
  done(): void
}

const MAX_INSTANCE_ID = 64

function asInterestMessage(value: unknown): InterestMessage | undefined {
  if (typeof value !== 'object' || value === null) return undefined
  const m = value as Record<string, unknown>
  if (typeof m.instance !== 'string' || m.instance.length === 0 || m.instance.length > MAX_INSTANCE_ID) return undefined
  if (typeof m.listeners !== 'boolean') return undefined
  if (m.round !== undefined && !Number.isSafeInteger(m.round)) return undefined
  return value as InterestMessage
}

export interface BusInterestOptions {
  /** Announcement period (default INTEREST_PERIOD_MS; tests shorten it). */
  periodMs?: number
  /** Monotonic milliseconds. */
  now?: () => number
}

/**
 * Which other instances listen to events, so an instance publishes an event on NATS only when
 * one of them could receive it (issue #36: 100,000 heartbeats with no console open cost no
 * message). The rule, and why no event is lost for an open stream:
 *
 * - An instance whose first listener subscribes announces it on INTEREST_SUBJECT (after its
 *   subscription to the events subject, on the same connection: the server has that
 *   subscription before anyone reads the announcement). Every other instance records it and
 *   acknowledges. `acknowledged()` resolves once every instance heard from within the lifetime
 *   acknowledged (bounded by INTEREST_ACK_WAIT_MS), and the events route awaits it (through
 *   `EventBus.listening`) before it answers the stream's headers. So an event raised anywhere
 *   after the stream opened is raised by an instance that already knows: it is published.
 *   Not a flush alone: the server having the announcement does not mean the other instance
 *   read it before its next event (it reads its sockets in any order).
 * - An instance the announcer did not know yet (just started, or back from a NATS outage)
 *   publishes every event for INTEREST_GRACE_PERIODS periods, whoever listens. (An announcer
 *   that just started itself waits INTEREST_WHO_WAIT_MS for the answers to its own "who
 *   listens?" and then for the acknowledgements of every instance that answered.) It subscribes
 *   here first, then asks "who listens?" (everyone answers at once); an instance with listeners
 *   also re-announces every period, so by the end of the grace it knows every interest.
 * - Every instance announces its state every period (with listeners or without): that is how
 *   the others know whom to wait for. An announcement is believed INTEREST_LIFETIME_PERIODS
 *   periods: a dead instance's interest stops the publishing then. The last listener leaving
 *   withdraws at once; closing says `gone`.
 */
export class BusInterest {
  /** This instance's id in announcements. */
  readonly instance = randomBytes(8).toString('base64url')
  private readonly periodMs: number
  private readonly lifetimeMs: number
  private readonly graceMs: number
  private readonly now: () => number
  /** Instances heard from, and until when (monotonic) each is believed. */
  private readonly peers = new Map<string, number>()
  /** Instances with listeners, and until when each is believed. */
  private readonly interested = new Map<string, number>()
  private listeners = false
  private publishAllUntil: number
  /** Until then, the answers to "who listens?" may still come in. */
  private askingUntil: number
  private round = 0
  private pending: AckRound | undefined
  private acked: Promise<void> = Promise.resolve()
  private readonly subscriptions: Subscription[]
  private readonly ackSubject: string
  private readonly announcements: PeriodicTask
  private readonly encoder = new TextEncoder()
  private readonly decoder = new TextDecoder()
  private closed = false

  constructor(
    private readonly nc: NatsConnection,
    private readonly connection: NatsConnectionWatch,
    private readonly log: FastifyBaseLogger,
    options: BusInterestOptions = {},
  ) {
    this.periodMs = options.periodMs ?? INTEREST_PERIOD_MS
    this.lifetimeMs = INTEREST_LIFETIME_PERIODS * this.periodMs
    this.graceMs = INTEREST_GRACE_PERIODS * this.periodMs
    this.now = options.now ?? (() => performance.now())
    this.publishAllUntil = this.now() + this.graceMs
    this.askingUntil = this.now() + INTEREST_WHO_WAIT_MS
    this.ackSubject = `${INTEREST_SUBJECT}.ack.${this.instance}`
    // Subscribed before asking: every answer, and every announcement from now on, reaches us.
    this.subscriptions = [
      nc.subscribe(INTEREST_SUBJECT, { callback: (err, msg) => this.receive(err, msg) }),
      nc.subscribe(this.ackSubject, { callback: (err, msg) => this.receiveAck(err, msg) }),
    ]
    this.say({ who: true })
    this.announcements = new PeriodicTask(async () => this.say(), (err) => this.log.warn({ err }, 'could not announce event interest'))
    this.announcements.start(this.periodMs)
    connection.onChange((up) => {
      if (!up || this.closed) return
      // What was said meanwhile was missed: publish everything again for a grace, and ask.
      this.publishAllUntil = this.now() + this.graceMs
      this.askingUntil = this.now() + INTEREST_WHO_WAIT_MS
      this.say({ who: true })
    })
  }

  /** Whether an event raised now must go on NATS: another instance listens, or this one is still learning who does. */
  get wanted(): boolean {
    const now = this.now()
    if (now < this.publishAllUntil) return true
    for (const [instance, until] of this.interested) {
      if (until > now) return true
      this.interested.delete(instance)
    }
    return false
  }

  /** Milliseconds until the start-up (or reconnect) grace ends: 0 once this instance publishes only what is listened to. */
  get graceLeftMs(): number {
    return Math.max(0, this.publishAllUntil - this.now())
  }

  /** Resolves once the start-up (or reconnect) grace is over (tests await it). */
  async learned(): Promise<void> {
    while (this.graceLeftMs > 0) await new Promise((resolve) => setTimeout(resolve, this.graceLeftMs))
  }

  /** The other instances believed to have listeners now (tests and diagnostics read it). */
  interestedInstances(): string[] {
    const now = this.now()
    return [...this.interested].filter(([, until]) => until > now).map(([instance]) => instance)
  }

  /**
   * This instance's first listener subscribed: tells the others, who acknowledge (see
   * `acknowledged`). The instances waited for are those heard from within the lifetime; while
   * this instance still asks who is there (just started), those that answer by the end of it.
   */
  announce(): void {
    this.listeners = true
    this.finishRound()
    if (!this.connection.connected) return
    const round = ++this.round
    const asking = Math.max(0, this.askingUntil - this.now())
    this.acked = new Promise<void>((resolve) => {
      const timeout = setTimeout(() => {
        const late = [...(this.pending?.waiting ?? [])]
        this.log.warn({ instances: late }, 'instances did not acknowledge event interest in time')
        // Dead or stalled: not waited for again until it is heard from.
        for (const instance of late) this.peers.delete(instance)
        this.finishRound()
      }, asking + INTEREST_ACK_WAIT_MS)
      timeout.unref()
      const pending: AckRound = {
        round,
        acked: new Set(),
        waiting: null,
        done: () => {
          clearTimeout(timeout)
          resolve()
        },
      }
      this.pending = pending
      const waitForPeers = () => {
        if (this.pending !== pending) return
        pending.waiting = new Set(this.livePeers().filter((instance) => !pending.acked.has(instance)))
        if (pending.waiting.size === 0) this.finishRound()
      }
      if (asking > 0) setTimeout(waitForPeers, asking).unref()
      else waitForPeers()
    })
    this.say({ round }, this.ackSubject)
  }

  /** This instance's last listener left. */
  withdraw(): void {
    this.listeners = false
    this.finishRound()
    this.say()
  }

  /** Resolves once every instance known acknowledged the last announcement (or INTEREST_ACK_WAIT_MS passed). */
  acknowledged(): Promise<void> {
    return this.acked
  }

  close(): void {
    if (this.closed) return
    this.closed = true
    void this.announcements.stop()
    this.finishRound()
    this.say({ gone: true })
    for (const subscription of this.subscriptions) subscription.unsubscribe()
  }

  private livePeers(): string[] {
    const now = this.now()
    const live: string[] = []
    for (const [instance, until] of this.peers) {
      if (until > now) live.push(instance)
      else this.peers.delete(instance)
    }
    return live
  }

  private finishRound(): void {
    const pending = this.pending
    this.pending = undefined
    pending?.done()
  }

  private say(extra: Partial<InterestMessage> = {}, reply?: string): void {
    if (!this.connection.connected || (this.closed && !extra.gone)) return
    const message: InterestMessage = { instance: this.instance, listeners: this.listeners, ...extra }
    try {
      this.nc.publish(INTEREST_SUBJECT, this.encoder.encode(JSON.stringify(message)), reply ? { reply } : undefined)
    } catch (err) {
      this.log.warn({ err }, 'could not announce event interest')
    }
  }

  private receive(err: Error | null, msg: Msg): void {
    if (err) return this.log.error({ err }, 'NATS event-interest subscription failed')
    const message = this.decode(msg.data)
    if (!message || message.instance === this.instance) return
    const { instance } = message
    if (message.gone) {
      this.peers.delete(instance)
      this.interested.delete(instance)
      this.acknowledgedBy(instance, this.pending?.round)
      return
    }
    const until = this.now() + this.lifetimeMs
    this.peers.set(instance, until)
    if (message.listeners) this.interested.set(instance, until)
    else this.interested.delete(instance)
    // Recorded first: from this acknowledgement on, every event raised here goes on NATS.
    if (message.round !== undefined && msg.reply) this.respond(msg, { instance: this.instance, listeners: this.listeners, round: message.round })
    if (message.who) this.say()
  }

  private respond(msg: Msg, message: InterestMessage): void {
    try {
      msg.respond(this.encoder.encode(JSON.stringify(message)))
    } catch (err) {
      this.log.warn({ err }, 'could not acknowledge event interest')
    }
  }

  private receiveAck(err: Error | null, msg: Msg): void {
    if (err) return this.log.error({ err }, 'NATS event-interest acknowledgement subscription failed')
    const message = this.decode(msg.data)
    if (message) this.acknowledgedBy(message.instance, message.round)
  }

  private acknowledgedBy(instance: string, round: number | undefined): void {
    const pending = this.pending
    if (!pending || round !== pending.round) return
    pending.acked.add(instance)
    if (!pending.waiting) return
    pending.waiting.delete(instance)
    if (pending.waiting.size === 0) this.finishRound()
  }

  private decode(data: Uint8Array): InterestMessage | undefined {
    try {
      const message = asInterestMessage(JSON.parse(this.decoder.decode(data)))
      if (message) return message
    } catch {
      // Not ours: ignored.
    }
    this.log.warn('ignored a malformed message on the event-interest subject')
    return undefined
  }
}
