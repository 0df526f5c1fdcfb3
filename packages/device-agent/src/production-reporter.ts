import { randomBytes } from 'node:crypto'
import { EventEmitter } from 'node:events'
import { isPlainObject } from './lib/is-plain-object.js'
import { CLOSE_CODES } from './protocol/close-codes.js'
import { MAX_PRODUCTION_EVENTS, productionEventError, type ProductionAckFrame, type ProductionEvent, type StateEvent } from './protocol/production.js'

/** `Omit` over each member of a union. */
type OmitEach<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never

/** What the app reports: an event of contract §16 without `id` (the SDK assigns it) and with `ts` optional (default now). */
export type ProductionEventInput = OmitEach<ProductionEvent, 'id' | 'ts'> & { ts?: number }

export interface ProductionOptions {
  /** Events kept until acknowledged; beyond, the oldest are dropped (and counted). Default 10,000. */
  maxQueued?: number
  /** Events reported within this many milliseconds leave in one frame (up to 500). Default 20. */
  flushMs?: number
  /**
   * After a gateway refused `production` frames (close 4400 naming them: a fleetgate without
   * production reporting), the agent sends none for this long, keeping the events (bounded). A
   * gateway restart (close 1012) tries again at once. Default 10 minutes.
   */
  unsupportedRetryMs?: number
}

export interface DroppedInfo {
  /** Events dropped now, oldest first. */
  count: number
  /** Events dropped since the agent started. */
  total: number
  /** The ids of the events dropped now. */
  ids: string[]
}

export interface RejectedInfo {
  event: ProductionEvent
  /** The gateway's reason. */
  error: string
}

export interface ProductionReporterEvents {
  /** The queue was full: the oldest events were dropped, unsent or unacknowledged. */
  dropped: [info: DroppedInfo]
  /** The gateway refused an event (bad field, `ts` out of its range…); it is not sent again. */
  rejected: [info: RejectedInfo]
  /** The gateway acknowledged these ids: they are stored. */
  acknowledged: [ids: string[]]
  /** The gateway closed the link over a `production` frame: it does not take them (yet). */
  unsupported: [info: { code: number; reason: string }]
}

/** What the reporter needs of the agent: a way to send a frame on the current link, when there is one. */
export interface ProductionLink {
  /** Sends a frame's text when the link is registered and ready; false when it cannot go now. */
  send(text: string): boolean
  log(level: 'info' | 'warn' | 'error', message: string): void
}

/** An event's JSON is at most this long, so 500 of them stay under the 16 MiB frame limit. */
export const MAX_PRODUCTION_EVENT_BYTES = 32 * 1024

/** `production` frames a machine may have unacknowledged at once; the gateway stops reading its link beyond. */
export const MAX_UNACKED_PRODUCTION_FRAMES = 64

/**
 * Production reporting of contract §16 (`agent.production`): assigns each event an id unique for
 * this machine (a random prefix per agent start and a counter), keeps every event until a
 * `production-ack` names it, sends them in order in frames of at most 500 with at most 64
 * frames unacknowledged, and sends again after a re-link what was not acknowledged. After each
 * link it reports the machine's last reported state again (new id, `ts` now), so the gateway's
 * `offline` time ends where the machine is back.
 */
export class ProductionReporter extends EventEmitter<ProductionReporterEvents> {
  private readonly maxQueued: number
  private readonly flushMs: number
  private readonly unsupportedRetryMs: number
  private readonly idPrefix = randomBytes(6).toString('hex')
  private sequence = 0
  /** Every event not yet acknowledged nor rejected, in the order reported. */
  private readonly kept = new Map<string, ProductionEvent>()
  /** Ids not yet sent on the current link, in order; may name events since dropped or acknowledged. */
  private unsent: string[] = []
  private unsentHead = 0
  /** The ids of each frame sent on the current link and not yet acknowledged. */
  private inFlight: string[][] = []
  private linked = false
  private sentOnLink = false
  private unsupportedSince: number | undefined
  private lastState: StateEvent | undefined
  private flushTimer: NodeJS.Timeout | undefined
  private droppedTotal = 0
  private rejectedTotal = 0
  private acknowledgedTotal = 0

  constructor(
    private readonly link: ProductionLink,
    options: ProductionOptions = {},
    private readonly now: () => number = Date.now,
  ) {
    super()
    this.maxQueued = options.maxQueued ?? 10_000
    this.flushMs = options.flushMs ?? 20
    this.unsupportedRetryMs = options.unsupportedRetryMs ?? 10 * 60_000
    if (!(Number.isInteger(this.maxQueued) && this.maxQueued >= 1)) throw new RangeError('production.maxQueued must be a whole number ≥ 1')
    if (!(this.flushMs >= 0) || !(this.unsupportedRetryMs >= 0)) throw new RangeError('production.flushMs and production.unsupportedRetryMs must be ≥ 0')
  }

  /**
   * Reports one event; it goes out with the next frame (at once when linked, else after the next
   * link) and is kept until the gateway acknowledges it.
   * @returns the id the SDK gave the event
   * @throws TypeError when the event does not have the shape contract §16 gives its kind
   */
  report(input: ProductionEventInput): string {
    if (!isPlainObject(input)) throw new TypeError('invalid production event: not an object')
    if ('id' in input) throw new TypeError('invalid production event: id is assigned by the SDK; leave it out')
    const event = { ...input, id: this.nextId(), ts: input.ts ?? this.now() / 1000 } as ProductionEvent
    const error = productionEventError(event as unknown as Record<string, unknown>)
    if (error !== undefined) throw new TypeError(`invalid production event: ${error}`)
    if (JSON.stringify(event).length > MAX_PRODUCTION_EVENT_BYTES) throw new TypeError(`invalid production event: over ${MAX_PRODUCTION_EVENT_BYTES} bytes of JSON`)
    if (event.kind === 'state' && (this.lastState === undefined || event.ts >= this.lastState.ts)) this.lastState = event
    this.keep(event)
    return event.id
  }

  /** Events kept: not yet acknowledged by the gateway, nor rejected, nor dropped. */
  get queued(): number {
    return this.kept.size
  }

  /** Events dropped because the queue was full, since the agent started. */
  get dropped(): number {
    return this.droppedTotal
  }

  /** Events the gateway rejected, since the agent started. */
  get rejected(): number {
    return this.rejectedTotal
  }

  /** Events the gateway acknowledged, since the agent started. */
  get acknowledged(): number {
    return this.acknowledgedTotal
  }

  /** Frames sent on the current link and not yet acknowledged. */
  get framesInFlight(): number {
    return this.inFlight.length
  }

  /** The link is registered and its first heartbeat is out: send what is kept, then the current state again. */
  onLinked(): void {
    this.linked = true
    this.sentOnLink = false
    this.inFlight = []
    if (this.unsupportedSince !== undefined && this.now() - this.unsupportedSince < this.unsupportedRetryMs) return
    this.unsupportedSince = undefined
    this.unsent = [...this.kept.keys()]
    this.unsentHead = 0
    if (this.lastState) {
      const { id: _, ts: __, ...state } = this.lastState
      this.keep({ ...state, id: this.nextId(), ts: this.now() / 1000 })
    }
    this.flush()
  }

  /** The link closed: whatever was in flight is sent again on the next link. */
  onUnlinked(code: number, reason: string): void {
    const refused = this.linked && this.sentOnLink && code === CLOSE_CODES.bad_frame && /\bproduction\b/.test(reason)
    this.linked = false
    this.inFlight = []
    clearTimeout(this.flushTimer)
    this.flushTimer = undefined
    if (code === CLOSE_CODES.restarting) this.unsupportedSince = undefined
    if (refused) {
      this.unsupportedSince = this.now()
      this.link.log('warn', `the gateway does not take production frames (close ${code} ${reason}); ${this.kept.size} event(s) kept, trying again in ${Math.round(this.unsupportedRetryMs / 1000)} s or after a gateway restart`)
      this.emit('unsupported', { code, reason })
    }
  }

  /** A `production-ack` arrived on the current link. */
  onAck(frame: ProductionAckFrame): void {
    const answered = new Set<string>()
    const acknowledged: string[] = []
    for (const id of frame.ids) {
      answered.add(id)
      if (this.kept.delete(id)) acknowledged.push(id)
    }
    this.acknowledgedTotal += acknowledged.length
    for (const { id, error } of frame.rejected ?? []) {
      answered.add(id)
      const event = this.kept.get(id)
      if (!event) continue
      this.kept.delete(id)
      this.rejectedTotal++
      this.link.log('warn', `production event ${id} (${event.kind}) rejected: ${error}`)
      this.emit('rejected', { event, error })
    }
    // A frame is answered by the ack that names its events; any it left out wait for the next link.
    this.inFlight = this.inFlight.filter((ids) => !ids.some((id) => answered.has(id)))
    if (acknowledged.length > 0) this.emit('acknowledged', acknowledged)
    this.flush()
  }

  /** Stops the flush timer (the agent is closing); kept events stay in memory. */
  stop(): void {
    clearTimeout(this.flushTimer)
    this.flushTimer = undefined
    this.linked = false
  }

  private nextId(): string {
    return `${this.idPrefix}-${(++this.sequence).toString(36)}`
  }

  private keep(event: ProductionEvent): void {
    this.kept.set(event.id, event)
    // Offline, the next link sends everything kept anyway.
    if (this.linked && this.unsupportedSince === undefined) this.unsent.push(event.id)
    if (this.kept.size > this.maxQueued) this.dropOldest(this.kept.size - this.maxQueued)
    this.scheduleFlush()
  }

  private dropOldest(count: number): void {
    const ids: string[] = []
    for (const id of this.kept.keys()) {
      if (ids.length === count) break
      ids.push(id)
    }
    for (const id of ids) this.kept.delete(id)
    this.droppedTotal += ids.length
    this.link.log('warn', `production queue full (${this.maxQueued}): dropped the ${ids.length} oldest event(s), ${this.droppedTotal} in all`)
    this.emit('dropped', { count: ids.length, total: this.droppedTotal, ids })
  }

  private scheduleFlush(): void {
    if (!this.linked || this.flushTimer !== undefined || this.unsupportedSince !== undefined) return
    this.flushTimer = setTimeout(() => {
      this.flushTimer = undefined
      this.flush()
    }, this.flushMs)
  }

  /** Sends what is unsent, in order, in frames of up to 500 events, while fewer than 64 frames are unacknowledged. */
  private flush(): void {
    clearTimeout(this.flushTimer)
    this.flushTimer = undefined
    if (!this.linked || this.unsupportedSince !== undefined) return
    while (this.inFlight.length < MAX_UNACKED_PRODUCTION_FRAMES) {
      const events: ProductionEvent[] = []
      let next = this.unsentHead
      for (; next < this.unsent.length && events.length < MAX_PRODUCTION_EVENTS; next++) {
        const event = this.kept.get(this.unsent[next]!)
        if (event) events.push(event)
      }
      if (events.length === 0) {
        this.unsent = []
        this.unsentHead = 0
        return
      }
      if (!this.link.send(JSON.stringify({ type: 'production', events }))) return
      this.sentOnLink = true
      this.unsentHead = next
      this.inFlight.push(events.map((e) => e.id))
    }
    // Let the consumed part of the list go now and then.
    if (this.unsentHead > 10_000) {
      this.unsent = this.unsent.slice(this.unsentHead)
      this.unsentHead = 0
    }
  }
}
