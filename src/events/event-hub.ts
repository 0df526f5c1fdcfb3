import type { ServerResponse } from 'node:http'
import { Counter, Gauge, type Registry } from 'prom-client'
import type { AuthUser } from '../auth/user-directory.js'
import { AppError } from '../errors.js'
import type { EventBus } from './event-bus.js'
import type { StreamedEvent } from './event-envelope.js'
import { STREAM_LIMIT_RETRY_S, type EventOptions } from './event-options.js'
import { EventStream, type EndReason } from './event-stream.js'

const MAX_TIMER_MS = 2 ** 31 - 1

/** What the hub needs of `SessionRevocations`: a stream of a session ended by logout (on any instance) ends. */
export interface EndedSessions {
  onEnded(listener: (sid: string) => void): () => void
  knownRevoked(sid: string): boolean
}

export interface OpenStream {
  stream: EventStream
  /** Resolves once events raised on other instances reach this stream. */
  listening(): Promise<void>
  /** Call once the user's bound devices are known (admins: nothing to load). */
  start(boundDeviceIds: Iterable<string>): void
  /** Gives the slot back when the stream could not be started. */
  abandon(): void
}

/**
 * This instance's open event streams: one bus subscription for all of them, held only while
 * a stream is open (an instance without streams receives no events), the per-user limit, one
 * keep-alive timer, token expiry and shutdown.
 */
export class EventHub {
  private readonly streams = new Set<EventStream>()
  private readonly perUser = new Map<string, number>()
  private readonly expiry = new Map<EventStream, NodeJS.Timeout>()
  /** The session each stream was opened with. */
  private readonly sessionOf = new Map<EventStream, string>()
  private readonly stopHearingLogouts: () => void
  private unsubscribe: (() => void) | undefined
  private keepAlive: NodeJS.Timeout | undefined
  private readonly dropped: Counter<'reason'>
  private closing = false

  constructor(
    private readonly bus: Pick<EventBus<StreamedEvent>, 'subscribe' | 'listening'>,
    private readonly options: Required<EventOptions>,
    registry: Registry,
    private readonly sessions: EndedSessions,
  ) {
    this.stopHearingLogouts = sessions.onEnded((sid) => this.endSession(sid))
    const streams = this.streams
    new Gauge({
      name: 'fleetgate_event_streams',
      help: 'Open event streams (GET /api/v1/events) on this instance',
      registers: [registry],
      collect() {
        this.set(streams.size)
      },
    })
    this.dropped = new Counter({
      name: 'fleetgate_event_streams_ended_total',
      help: 'Event streams ended, by reason (client, token_expired, logged_out, slow_consumer, shutdown)',
      labelNames: ['reason'],
      registers: [registry],
    })
  }

  get size(): number {
    return this.streams.size
  }

  /**
   * Takes one of the user's stream slots (429 when all are taken) and attaches a stream that
   * holds events until `start`. Attached before the bindings are read, so no binding made in
   * between is missed.
   */
  open(res: ServerResponse, user: AuthUser, sid: string, deviceIds: ReadonlySet<string> | undefined, expiresAtMs: number): OpenStream {
    if (this.closing) throw new AppError('not_configured', 'The server is shutting down', {}, 503)
    const count = this.perUser.get(user.id) ?? 0
    if (count >= this.options.maxStreamsPerUser) {
      throw new AppError('rate_limited', `At most ${this.options.maxStreamsPerUser} open event streams per user`, { retry_after: STREAM_LIMIT_RETRY_S })
    }
    this.perUser.set(user.id, count + 1)
    const stream = new EventStream(res, {
      user,
      deviceIds,
      maxBufferedBytes: this.options.maxBufferedBytes,
      onEnd: (s, reason) => this.forget(s, reason),
    })
    this.streams.add(stream)
    this.sessionOf.set(stream, sid)
    this.unsubscribe ??= this.bus.subscribe((event) => {
      for (const stream of this.streams) stream.offer(event)
    })
    return {
      stream,
      listening: () => this.bus.listening(),
      start: (bound) => {
        // A logout answered while the stream was being opened.
        if (this.sessions.knownRevoked(sid)) return stream.end('logged_out')
        this.armExpiry(stream, expiresAtMs)
        stream.start(bound)
      },
      abandon: () => this.forget(stream, 'client', false),
    }
  }

  /** Ends every stream (server shutdown); new ones are refused from now on. */
  /** Starts the keep-alive comments every open stream gets. */
  start(): void {
    this.keepAlive ??= setInterval(() => {
      for (const stream of this.streams) stream.comment('keep-alive')
    }, this.options.keepAliveMs)
    this.keepAlive.unref()
  }

  closeAll(): void {
    this.closing = true
    this.stopHearingLogouts()
    clearInterval(this.keepAlive)
    this.unsubscribe?.()
    this.unsubscribe = undefined
    for (const stream of [...this.streams]) stream.end('shutdown')
  }

  /** Ends the streams of session `sid` (logged out here or on another instance). */
  private endSession(sid: string): void {
    for (const [stream, of] of this.sessionOf) if (of === sid) stream.end('logged_out')
  }

  private armExpiry(stream: EventStream, expiresAtMs: number): void {
    const wait = expiresAtMs - Date.now()
    if (wait <= 0) return stream.end('token_expired')
    const timer = setTimeout(() => {
      if (wait > MAX_TIMER_MS) this.armExpiry(stream, expiresAtMs)
      else stream.end('token_expired')
    }, Math.min(wait, MAX_TIMER_MS))
    timer.unref()
    this.expiry.set(stream, timer)
  }

  private forget(stream: EventStream, reason: EndReason, count = true): void {
    if (!this.streams.delete(stream)) return
    if (this.streams.size === 0) {
      this.unsubscribe?.()
      this.unsubscribe = undefined
    }
    clearTimeout(this.expiry.get(stream))
    this.expiry.delete(stream)
    this.sessionOf.delete(stream)
    const id = stream.user.id
    const left = (this.perUser.get(id) ?? 1) - 1
    if (left > 0) this.perUser.set(id, left)
    else this.perUser.delete(id)
    if (count) this.dropped.inc({ reason })
  }
}
