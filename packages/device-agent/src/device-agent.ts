import { EventEmitter } from 'node:events'
import type { RequestOptions } from 'node:https'
import { hostname as osHostname } from 'node:os'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import WebSocket, { type ClientOptions } from 'ws'
import { AgentLinkSession, type AgentLinkHost } from './agent-link-session.js'
import { Backoff, type BackoffOptions } from './backoff.js'
import { deviceLinkUrl, gatewayHttpUrl } from './device-link-url.js'
import type { FirmwareOffer, FirmwareOptions, FirmwareStatus } from './firmware-handler.js'
import { FirmwareOffers } from './firmware-offers.js'
import { FirmwareStatusOutbox, firmwareStatusFrame } from './firmware-status-outbox.js'
import { heartbeatStatus } from './heartbeat-status.js'
import { ProductionReporter, type ProductionOptions } from './production-reporter.js'
import { RegisterFrame, type FirmwareOfferFrame, type RegisteredFrame, type RequestFrame } from './protocol/frames.js'
import type { RouteTable } from './route-table.js'
import { TaskQueue } from './task-queue.js'
import { CLOSE_CODES, FATAL_CLOSE_CODES, type FatalReason } from './protocol/close-codes.js'
import { MAX_FRAME_BYTES } from './protocol/limits.js'

export type StatusProvider = () => Record<string, unknown> | Promise<Record<string, unknown>>
export type AgentLog = (level: 'info' | 'warn' | 'error', message: string) => void

export interface DeviceAgentOptions {
  /** Gateway base URL, http(s) or ws(s); `/api/v1/device-link` is appended. */
  url: string
  deviceId: string
  /** 16–256 characters; the gateway trusts the first key it sees for an id. */
  key: string
  /** Default: the operating system's host name. */
  hostname?: string
  /** Software version reported at registration. */
  version: string
  /** Reported address; when absent the gateway records the socket's remote address. */
  ip?: string
  /** Needed for a first registration when the gateway sets DEVICE_ENROLL_TOKEN. */
  enrollToken?: string
  /** Handlers for forwarded requests. */
  routes: RouteTable
  /** Called for each heartbeat; its object becomes the gateway's `last_status`. Default `{}`. */
  status?: StatusProvider
  /** Seconds between heartbeats, > 0 and < 20 (the gateway's limit). Default 15. */
  heartbeatSeconds?: number
  /** Handlers running at once; further requests wait in order. Default 16 (the gateway allows 64 in flight). */
  maxConcurrentRequests?: number
  /** Reconnect back-off: base 500 ms, cap 30 s, full jitter. */
  backoff?: BackoffOptions
  /** A link must stay registered this long before the back-off starts over. Default 30 s (contract §4). */
  stableLinkMs?: number
  /** After a gateway restart (close 1012) the agent re-links after a random delay up to this. Default 2 s. */
  restartDelayMaxMs?: number
  /**
   * After the gateway refused this device's identity (4401: key or enroll token; 4409: another
   * connection of the same id), stop for good instead of linking again after the back-off.
   * Default false: the contract's rule (§4) is to wait at least the back-off and link again, so a
   * link closed by a key reset, or by the gateway's own bookkeeping, comes back by itself.
   */
  stopOnRefusal?: boolean
  /** Time to wait for `registered` after the socket opens before trying again. Default 10 s. */
  registerTimeoutMs?: number
  log?: AgentLog
  /** Extra `ws` client options (TLS settings, headers, agent). */
  socketOptions?: ClientOptions
  /** Takes the gateway's firmware offers (contract §14). Without it an offer is reported `failed`. */
  firmware?: FirmwareOptions
  /** The machine's rated placements per hour (1–1,000,000), sent at registration (contract §16). */
  ratedCph?: number
  /** Production reporting (`agent.production`, contract §16): queue bound and batching. */
  production?: ProductionOptions
}

export interface DisconnectInfo {
  code: number
  reason: string
  /** Delay before the next attempt; null when the agent will not reconnect. */
  reconnectInMs: number | null
}

export type StopReason = 'closed' | FatalReason

export interface DeviceAgentEvents {
  registered: [frame: RegisteredFrame]
  disconnected: [info: DisconnectInfo]
  error: [error: DeviceAgentError]
  request: [frame: RequestFrame]
  stopped: [info: { reason: StopReason }]
  /** Every firmware status reported, sent at once or kept for the next link. */
  firmware: [status: FirmwareStatus]
  /** A firmware offer arrived (before the handler decides what to do with it). */
  offer: [offer: FirmwareOffer]
}

/**
 * Why the agent reports an error: the gateway refused the device's identity (`unauthorized`,
 * `replaced`: the agent links again after its back-off, or stops with `stopOnRefusal`), or
 * `status_too_large`, a heartbeat status over the gateway's limit that the agent did not send
 * (the link stays up).
 */
export type AgentErrorReason = FatalReason | 'status_too_large'

/**
 * An error the agent reports: a refused identity — the gateway refused the key or enroll token
 * (4401), or another connection replaced this one (4409) — or a frame the agent refused to send.
 */
export class DeviceAgentError extends Error {
  constructor(
    readonly reason: AgentErrorReason,
    /** The close code of a fatal close; null when the link did not close. */
    readonly closeCode: number | null,
    message: string,
  ) {
    super(message)
    this.name = 'DeviceAgentError'
  }
}

export type AgentState = 'idle' | 'connecting' | 'registering' | 'registered' | 'waiting' | 'stopping' | 'stopped'

/** Where the agent is between links; while `linking`, its state is its session's. */
type AgentPhase = 'idle' | 'linking' | 'waiting' | 'stopping' | 'stopped'

const checkRegister = TypeCompiler.Compile(RegisterFrame)
// Gateway frames may exceed the device frame limit by their envelope (contract §2).
const MAX_INCOMING_BYTES = MAX_FRAME_BYTES + 1024 * 1024

/**
 * Keeps a pick-and-place machine linked to the fleetgate gateway: registers, sends heartbeats,
 * answers forwarded requests through a route table and reconnects with back-off.
 *
 * @example
 * const routes = new RouteTable().get('/hardware/position', () => ok({ x: 0, y: 0, z: 0, r: 0 }))
 * const agent = new DeviceAgent({ url: 'https://gw.example.com', deviceId: 'pnp-01', key, version: '2.3.1', routes })
 * agent.on('error', (err) => console.error(err.message))
 * agent.start()
 */
export class DeviceAgent extends EventEmitter<DeviceAgentEvents> {
  readonly deviceId: string
  readonly url: string
  private readonly backoff: Backoff
  private readonly restartDelayMaxMs: number
  private readonly stopOnRefusal: boolean
  private readonly random: () => number
  private readonly queue: TaskQueue
  private readonly log: AgentLog
  private readonly socketOptions: ClientOptions
  /** What each link's session is given: the settings and the callbacks into this agent. */
  private readonly linkHost: AgentLinkHost
  private phase: AgentPhase = 'idle'
  /** The current connection attempt; undefined between links. */
  private session: AgentLinkSession | undefined
  private reconnectTimer: NodeJS.Timeout | undefined
  private readonly firmwareOffers: FirmwareOffers | undefined
  private readonly firmwareOutbox = new FirmwareStatusOutbox((frame) => this.session?.sendIfReady(frame) ?? false)
  /** The next close is a `relink()`: connect again at once. */
  private relinking = false
  /**
   * Production reporting (contract §16): `agent.production.report({ kind: 'state', state: 'productive' })`.
   * Events are kept until the gateway acknowledges them and sent again after a re-link.
   */
  readonly production: ProductionReporter

  constructor(options: DeviceAgentOptions) {
    super()
    this.url = deviceLinkUrl(options.url)
    this.deviceId = options.deviceId
    const registerFrame = registerFrameOf(options)
    const heartbeatSeconds = options.heartbeatSeconds ?? 15
    if (!(heartbeatSeconds > 0 && heartbeatSeconds < 20)) throw new RangeError('heartbeatSeconds must be > 0 and < 20')
    this.backoff = new Backoff(options.backoff)
    const stableLinkMs = options.stableLinkMs ?? 30_000
    this.restartDelayMaxMs = options.restartDelayMaxMs ?? 2000
    this.stopOnRefusal = options.stopOnRefusal ?? false
    if (!(stableLinkMs >= 0) || !(this.restartDelayMaxMs >= 0)) throw new RangeError('stableLinkMs and restartDelayMaxMs must be ≥ 0')
    this.random = options.backoff?.random ?? Math.random
    this.queue = new TaskQueue(options.maxConcurrentRequests ?? 16)
    this.log = options.log ?? (() => undefined)
    this.socketOptions = options.socketOptions ?? {}
    const statusProvider = options.status ?? (() => ({}))
    this.production = new ProductionReporter({ send: (text) => this.session?.sendTextIfReady(text) ?? false, log: this.log }, options.production)
    this.linkHost = {
      registerFrame,
      registerTimeoutMs: options.registerTimeoutMs ?? 10_000,
      heartbeatMs: heartbeatSeconds * 1000,
      stableLinkMs,
      routes: options.routes,
      requests: this.queue,
      log: this.log,
      heartbeatStatus: () => heartbeatStatus(statusProvider, this.log, (message) => this.emitError(new DeviceAgentError('status_too_large', null, message))),
      registered: (frame) => this.emit('registered', frame),
      stable: () => this.backoff.reset(),
      ready: () => {
        this.firmwareOutbox.flush()
        this.production.onLinked()
      },
      request: (frame) => this.emit('request', frame),
      firmwareOffer: (frame) => this.takeFirmwareOffer(frame),
      productionAck: (frame) => this.production.onAck(frame),
      closed: (session, code, reason) => this.onSessionClosed(session, code, reason),
    }
    if (options.firmware) {
      this.firmwareOffers = new FirmwareOffers(options.firmware, {
        report: (status) => this.sendFirmwareStatus(status),
        imageUrl: (path) => gatewayHttpUrl(this.url, path),
        log: this.log,
        requestOptions: tlsOptionsOf(this.socketOptions),
      })
    }
  }

  get state(): AgentState {
    if (this.phase !== 'linking') return this.phase
    const link = this.session!.state
    // A session the agent closed (relink, register time-out) is between links until its socket has closed.
    return link === 'closed' ? 'waiting' : link
  }

  /** Starts connecting; the agent then keeps the link up until `close()` or a fatal close code. */
  start(): this {
    if (this.phase !== 'idle') throw new Error(`device agent already ${this.state}`)
    this.connect()
    return this
  }

  /** Closes the link (code 1000) and stops every timer; pending handlers' answers are dropped. */
  async close(): Promise<void> {
    if (this.phase === 'stopped' || this.phase === 'stopping') return
    this.phase = 'stopping'
    clearTimeout(this.reconnectTimer)
    this.queue.clear()
    this.firmwareOffers?.stop()
    this.production.stop()
    const session = this.session
    this.session = undefined
    await session?.close(1000, 'agent closing')
    this.stop('closed')
  }

  /**
   * Reports where an offered install stands (contract §4 step 6) and emits `firmware`. The firmware
   * handler reports by itself; call this for an install it does not see end, one that restarts the
   * process, say. Sent at once when the link is registered, else the latest status of each rollout
   * (`busy` excepted) is kept and sent on the next link, after its first heartbeat.
   * @returns whether it was sent now
   * @throws TypeError when an id or the state is not valid (`error` is cut to 1024 characters, `progress` to 0–100)
   */
  sendFirmwareStatus(status: FirmwareStatus): boolean {
    const frame = firmwareStatusFrame(status)
    const { type: _, ...reported } = frame
    this.emit('firmware', reported)
    return this.firmwareOutbox.report(frame)
  }

  /** Closes the link (1000) and links again at once without back-off, as a rebooted machine would. */
  relink(): void {
    if (this.phase === 'waiting') {
      clearTimeout(this.reconnectTimer)
      this.connect()
    } else if (this.phase === 'linking') {
      this.relinking = true
      void this.session!.close(1000, 'relinking')
    }
  }

  private connect(): void {
    this.phase = 'linking'
    const socket = new WebSocket(this.url, { handshakeTimeout: 10_000, maxPayload: MAX_INCOMING_BYTES, ...this.socketOptions })
    this.session = new AgentLinkSession(socket, this.linkHost)
  }

  private takeFirmwareOffer({ type: _, ...offer }: FirmwareOfferFrame): void {
    this.emit('offer', offer)
    if (this.firmwareOffers) return this.firmwareOffers.take(offer)
    this.log('warn', `firmware offer of rollout ${offer.rollout_id} declined: no firmware handler`)
    this.sendFirmwareStatus({ rollout_id: offer.rollout_id, release_id: offer.release_id, state: 'failed', error: 'this device takes no firmware offers (its agent has no firmware handler)' })
  }

  /** Decides what follows a link: link again after a delay, or stop. */
  private onSessionClosed(session: AgentLinkSession, code: number, reason: string): void {
    // A session let go by close() ends without a word.
    if (session !== this.session) return
    this.session = undefined
    this.queue.clear()
    this.production.onUnlinked(code, reason)
    const relinking = this.relinking
    this.relinking = false
    const refused = FATAL_CLOSE_CODES[code as keyof typeof FATAL_CLOSE_CODES]
    if (refused) return this.onRefused(refused, code, reason)
    const delay = relinking ? 0 : this.reconnectDelay(code)
    this.phase = 'waiting'
    this.log('info', `device link closed (${code}${reason ? ` ${reason}` : ''}); reconnecting in ${delay} ms`)
    this.emit('disconnected', { code, reason, reconnectInMs: delay })
    this.reconnectAfter(delay)
  }

  /** The gateway refused this device's identity (4401, 4409). */
  private onRefused(refused: FatalReason, code: number, reason: string): void {
    const delay = this.stopOnRefusal ? null : this.backoff.nextAfterRefusal()
    const message =
      (refused === 'unauthorized'
        ? `gateway refused device ${this.deviceId}: wrong key or enroll token (close ${code})`
        : `device ${this.deviceId} was linked from another connection (close ${code})`) + (delay === null ? '' : `; linking again in ${delay} ms`)
    this.log('error', message)
    if (delay !== null) this.phase = 'waiting'
    this.emit('disconnected', { code, reason, reconnectInMs: delay })
    this.emitError(new DeviceAgentError(refused, code, message))
    if (delay === null) this.stop(refused)
    else this.reconnectAfter(delay)
  }

  /** Unless a listener of the events just emitted closed the agent or relinked it. */
  private reconnectAfter(delay: number): void {
    if (this.phase === 'waiting') this.reconnectTimer = setTimeout(() => this.connect(), delay)
  }

  /**
   * After a restart (1012) a short random delay, the same for every attempt; after a refusal of
   * what this device sent (4400, 1009) at least the back-off base; otherwise the back-off.
   */
  private reconnectDelay(code: number): number {
    if (code === CLOSE_CODES.restarting) return Math.floor(this.random() * (this.restartDelayMaxMs + 1))
    if (code === CLOSE_CODES.bad_frame || code === CLOSE_CODES.too_big) return this.backoff.nextAfterRefusal()
    return this.backoff.next()
  }

  private emitError(error: DeviceAgentError): void {
    // An 'error' event without listeners would throw inside the socket's close handler.
    if (this.listenerCount('error') > 0) this.emit('error', error)
  }

  private stop(reason: StopReason): void {
    this.phase = 'stopped'
    this.emit('stopped', { reason })
  }
}

/** The register frame of contract §4 step 1, checked as the gateway will. */
function registerFrameOf(options: DeviceAgentOptions): RegisterFrame {
  const frame: RegisterFrame = {
    type: 'register',
    device_id: options.deviceId,
    key: options.key,
    hostname: options.hostname ?? osHostname(),
    version: options.version,
    ...(options.ip !== undefined && { ip: options.ip }),
    ...(options.enrollToken !== undefined && { enroll_token: options.enrollToken }),
    ...(options.ratedCph !== undefined && { rated_cph: options.ratedCph }),
  }
  if (!checkRegister.Check(frame)) {
    const first = checkRegister.Errors(frame).First()
    throw new TypeError(`invalid device agent options: ${first?.path.slice(1)}: ${first?.message}`)
  }
  return frame
}

const TLS_OPTIONS = ['ca', 'cert', 'key', 'pfx', 'passphrase', 'rejectUnauthorized'] as const

/** The link's TLS settings, for downloads from the same gateway. */
function tlsOptionsOf(options: ClientOptions): RequestOptions {
  return Object.fromEntries(TLS_OPTIONS.filter((name) => options[name] !== undefined).map((name) => [name, options[name]]))
}
