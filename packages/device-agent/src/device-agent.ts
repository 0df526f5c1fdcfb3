import { EventEmitter } from 'node:events'
import type { RequestOptions } from 'node:https'
import type { Socket } from 'node:net'
import { hostname as osHostname } from 'node:os'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import WebSocket, { type ClientOptions, type RawData } from 'ws'
import { Backoff, type BackoffOptions } from './backoff.js'
import { deviceLinkUrl, gatewayHttpUrl } from './device-link-url.js'
import type { FirmwareOffer, FirmwareOptions, FirmwareStatus } from './firmware-handler.js'
import { FirmwareOffers } from './firmware-offers.js'
import { FirmwareStatusOutbox, firmwareStatusFrame } from './firmware-status-outbox.js'
import {
  FrameError,
  parseGatewayFrame,
  RegisterFrame,
  type DeviceFrame,
  type FirmwareOfferFrame,
  type FirmwareStatusFrame,
  type RegisteredFrame,
  type RequestFrame,
} from './protocol/frames.js'
import type { RouteTable } from './route-table.js'
import { TaskQueue } from './task-queue.js'
import { sendBatched } from './protocol/batched-send.js'
import { rawDataText } from './protocol/raw-data.js'
import { responseFrameText } from './protocol/frame-text.js'
import { CLOSE_CODES, FATAL_CLOSE_CODES, type FatalReason } from './protocol/close-codes.js'
import { MAX_FRAME_BYTES, MAX_STATUS_BYTES } from './protocol/limits.js'

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
  private readonly registerFrame: RegisterFrame
  private readonly routes: RouteTable
  private readonly statusProvider: StatusProvider
  private readonly heartbeatMs: number
  private readonly registerTimeoutMs: number
  private readonly backoff: Backoff
  private readonly stableLinkMs: number
  private readonly restartDelayMaxMs: number
  private readonly stopOnRefusal: boolean
  private readonly random: () => number
  private readonly queue: TaskQueue
  private readonly log: AgentLog
  private readonly socketOptions: ClientOptions
  /** Each connection's socket, from its 'upgrade' response, for batched writes. */
  private readonly wires = new WeakMap<WebSocket, Socket>()
  private socket: WebSocket | undefined
  private heartbeatTimer: NodeJS.Timeout | undefined
  private registerTimer: NodeJS.Timeout | undefined
  private reconnectTimer: NodeJS.Timeout | undefined
  /** Resets the back-off once a link has stayed registered for `stableLinkMs`. */
  private stableTimer: NodeJS.Timeout | undefined
  private currentState: AgentState = 'idle'
  private readonly firmwareOffers: FirmwareOffers | undefined
  private readonly firmwareOutbox = new FirmwareStatusOutbox((frame) => this.sendOnReadyLink(frame))
  /** Registered and the link's first heartbeat sent: firmware statuses go out after the status they may depend on. */
  private linkReady = false
  /** The next close is a `relink()`: connect again at once. */
  private relinking = false

  constructor(options: DeviceAgentOptions) {
    super()
    this.url = deviceLinkUrl(options.url)
    this.deviceId = options.deviceId
    const frame: RegisterFrame = {
      type: 'register',
      device_id: options.deviceId,
      key: options.key,
      hostname: options.hostname ?? osHostname(),
      version: options.version,
      ...(options.ip !== undefined && { ip: options.ip }),
      ...(options.enrollToken !== undefined && { enroll_token: options.enrollToken }),
    }
    if (!checkRegister.Check(frame)) {
      const first = checkRegister.Errors(frame).First()
      throw new TypeError(`invalid device agent options: ${first?.path.slice(1)}: ${first?.message}`)
    }
    this.registerFrame = frame
    const heartbeatSeconds = options.heartbeatSeconds ?? 15
    if (!(heartbeatSeconds > 0 && heartbeatSeconds < 20)) throw new RangeError('heartbeatSeconds must be > 0 and < 20')
    this.heartbeatMs = heartbeatSeconds * 1000
    this.registerTimeoutMs = options.registerTimeoutMs ?? 10_000
    this.routes = options.routes
    this.statusProvider = options.status ?? (() => ({}))
    this.backoff = new Backoff(options.backoff)
    this.stableLinkMs = options.stableLinkMs ?? 30_000
    this.restartDelayMaxMs = options.restartDelayMaxMs ?? 2000
    this.stopOnRefusal = options.stopOnRefusal ?? false
    if (!(this.stableLinkMs >= 0) || !(this.restartDelayMaxMs >= 0)) throw new RangeError('stableLinkMs and restartDelayMaxMs must be ≥ 0')
    this.random = options.backoff?.random ?? Math.random
    this.queue = new TaskQueue(options.maxConcurrentRequests ?? 16)
    this.log = options.log ?? (() => undefined)
    this.socketOptions = options.socketOptions ?? {}
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
    return this.currentState
  }

  /** Starts connecting; the agent then keeps the link up until `close()` or a fatal close code. */
  start(): this {
    if (this.currentState !== 'idle') throw new Error(`device agent already ${this.currentState}`)
    this.connect()
    return this
  }

  /** Closes the link (code 1000) and stops every timer; pending handlers' answers are dropped. */
  async close(): Promise<void> {
    if (this.currentState === 'stopped' || this.currentState === 'stopping') return
    this.currentState = 'stopping'
    this.linkReady = false
    this.clearTimers()
    clearTimeout(this.reconnectTimer)
    this.queue.clear()
    this.firmwareOffers?.stop()
    const ws = this.socket
    this.socket = undefined
    if (ws && ws.readyState !== WebSocket.CLOSED) {
      await new Promise<void>((resolve) => {
        ws.once('close', () => resolve())
        const force = setTimeout(() => ws.terminate(), 2000)
        force.unref()
        ws.close(1000, 'agent closing')
      })
    }
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
    if (this.currentState === 'idle' || this.currentState === 'stopping' || this.currentState === 'stopped') return
    this.linkReady = false
    if (this.currentState === 'waiting') {
      clearTimeout(this.reconnectTimer)
      this.connect()
      return
    }
    this.relinking = true
    this.socket?.close(1000, 'relinking')
  }

  private connect(): void {
    this.currentState = 'connecting'
    const ws = new WebSocket(this.url, { handshakeTimeout: 10_000, maxPayload: MAX_INCOMING_BYTES, ...this.socketOptions })
    this.socket = ws
    ws.on('upgrade', (response) => this.wires.set(ws, response.socket))
    ws.on('open', () => {
      if (ws !== this.socket) return
      this.currentState = 'registering'
      this.send(ws, this.registerFrame)
      this.registerTimer = setTimeout(() => {
        this.log('warn', `no registered frame within ${this.registerTimeoutMs} ms; reconnecting`)
        ws.terminate()
      }, this.registerTimeoutMs)
    })
    ws.on('message', (data, isBinary) => {
      if (ws === this.socket) this.onMessage(ws, data, isBinary)
    })
    ws.on('error', (err) => this.log('warn', `device link error: ${err.message}`))
    ws.on('close', (code, reason) => {
      if (ws === this.socket) this.onClose(code, reason.toString())
    })
  }

  private onMessage(ws: WebSocket, data: RawData, isBinary: boolean): void {
    if (isBinary) return this.log('warn', 'ignored a binary frame')
    const text = rawDataText(data)
    let frame
    try {
      frame = parseGatewayFrame(text)
    } catch (err) {
      this.log('warn', `ignored a frame: ${(err as Error).message}`)
      if (err instanceof FrameError && err.frameType === 'request') this.answerMalformedRequest(ws, text, err)
      return
    }
    if (frame.type === 'registered') {
      if (this.currentState !== 'registering') return this.log('warn', 'ignored an unexpected registered frame')
      clearTimeout(this.registerTimer)
      this.currentState = 'registered'
      // A link the gateway drops soon after registering (a refused heartbeat, say) must not start the back-off over.
      this.stableTimer = setTimeout(() => this.backoff.reset(), this.stableLinkMs)
      this.startHeartbeat(ws)
      this.emit('registered', frame)
      return
    }
    if (frame.type === 'firmware-offer') return this.takeFirmwareOffer(frame)
    this.emit('request', frame)
    this.queue.push(() => this.serve(ws, frame))
  }

  private takeFirmwareOffer({ type: _, ...offer }: FirmwareOfferFrame): void {
    this.emit('offer', offer)
    if (this.firmwareOffers) return this.firmwareOffers.take(offer)
    this.log('warn', `firmware offer of rollout ${offer.rollout_id} declined: no firmware handler`)
    this.sendFirmwareStatus({ rollout_id: offer.rollout_id, release_id: offer.release_id, state: 'failed', error: 'this device takes no firmware offers (its agent has no firmware handler)' })
  }

  private sendOnReadyLink(frame: FirmwareStatusFrame): boolean {
    const ws = this.socket
    if (!this.linkReady || !ws || ws.readyState !== WebSocket.OPEN) return false
    this.send(ws, frame)
    return true
  }

  private async serve(ws: WebSocket, frame: RequestFrame): Promise<void> {
    // A request queued on a link that has since closed was already failed by the gateway.
    if (ws !== this.socket || ws.readyState !== WebSocket.OPEN) return
    const { method, path, query, body, user } = frame
    const result = await this.routes.dispatch({ method, path, query, body, user })
    this.respond(ws, frame.id, result.status, result.data)
  }

  private respond(ws: WebSocket, id: string, status: number, data: unknown): void {
    let text: string
    try {
      text = responseFrameText(id, status, data)
    } catch (err) {
      text = JSON.stringify({ type: 'response', id, status: 500, data: { error: 'internal', message: `unserializable answer: ${(err as Error).message}` } })
    }
    // A UTF-16 unit is at most 3 bytes of UTF-8: most answers need no byte count.
    if (text.length > MAX_FRAME_BYTES / 3 && Buffer.byteLength(text) > MAX_FRAME_BYTES) {
      text = JSON.stringify({ type: 'response', id, status: 500, data: { error: 'response_too_large', message: 'answer exceeds the 16 MiB frame limit' } })
    }
    this.sendText(ws, text)
  }

  /** A request with a usable id but a bad shape gets a 400 instead of leaving the gateway to time out. */
  private answerMalformedRequest(ws: WebSocket, text: string, err: FrameError): void {
    const id = (JSON.parse(text) as { id?: unknown }).id
    if (typeof id === 'string' && id.length > 0) this.respond(ws, id, 400, { error: 'bad_request', message: err.message })
  }

  private startHeartbeat(ws: WebSocket): void {
    let sending = false
    const beat = async () => {
      if (sending) return
      sending = true
      try {
        this.send(ws, { type: 'heartbeat', status: this.checkStatus(await this.readStatus()) })
        if (!this.linkReady && ws === this.socket && this.currentState === 'registered') {
          this.linkReady = true
          this.firmwareOutbox.flush()
        }
      } finally {
        sending = false
      }
    }
    void beat()
    this.heartbeatTimer = setInterval(() => void beat(), this.heartbeatMs)
  }

  private async readStatus(): Promise<Record<string, unknown>> {
    try {
      const status = await this.statusProvider()
      return typeof status === 'object' && status !== null ? status : { status }
    } catch (err) {
      this.log('warn', `status provider failed: ${(err as Error).message}`)
      return { error: 'status_unavailable' }
    }
  }

  /**
   * A status over the gateway's limit would close the link with 4400 (contract §4): it is not
   * sent; the heartbeat carries a small status naming the problem instead, so the link stays alive.
   */
  private checkStatus(status: Record<string, unknown>): Record<string, unknown> {
    let bytes: number
    try {
      bytes = Buffer.byteLength(JSON.stringify(status))
    } catch (err) {
      this.log('warn', `status is not JSON: ${(err as Error).message}`)
      return { error: 'status_unavailable' }
    }
    if (bytes <= MAX_STATUS_BYTES) return status
    const message = `heartbeat status of ${bytes} bytes of JSON is over the gateway's limit of ${MAX_STATUS_BYTES}; not sent`
    this.log('error', message)
    this.emitError(new DeviceAgentError('status_too_large', null, message))
    return { error: 'status_too_large', bytes }
  }

  private onClose(code: number, reason: string): void {
    this.socket = undefined
    this.linkReady = false
    this.clearTimers()
    this.queue.clear()
    const relinking = this.relinking
    this.relinking = false
    const refused = FATAL_CLOSE_CODES[code as keyof typeof FATAL_CLOSE_CODES]
    if (refused) {
      const delay = this.stopOnRefusal ? null : this.backoff.nextAfterRefusal()
      const message =
        (refused === 'unauthorized'
          ? `gateway refused device ${this.deviceId}: wrong key or enroll token (close ${code})`
          : `device ${this.deviceId} was linked from another connection (close ${code})`) + (delay === null ? '' : `; linking again in ${delay} ms`)
      this.log('error', message)
      if (delay === null) {
        this.emit('disconnected', { code, reason, reconnectInMs: null })
        this.emitError(new DeviceAgentError(refused, code, message))
        this.stop(refused)
        return
      }
      this.currentState = 'waiting'
      this.emit('disconnected', { code, reason, reconnectInMs: delay })
      this.emitError(new DeviceAgentError(refused, code, message))
      if (this.currentState === 'waiting') this.reconnectTimer = setTimeout(() => this.connect(), delay)
      return
    }
    const delay = relinking ? 0 : this.reconnectDelay(code)
    this.currentState = 'waiting'
    this.log('info', `device link closed (${code}${reason ? ` ${reason}` : ''}); reconnecting in ${delay} ms`)
    this.emit('disconnected', { code, reason, reconnectInMs: delay })
    this.reconnectTimer = setTimeout(() => this.connect(), delay)
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
    this.currentState = 'stopped'
    this.emit('stopped', { reason })
  }

  private clearTimers(): void {
    clearInterval(this.heartbeatTimer)
    clearTimeout(this.registerTimer)
    clearTimeout(this.stableTimer)
  }

  private send(ws: WebSocket, frame: DeviceFrame): void {
    this.sendText(ws, JSON.stringify(frame))
  }

  private sendText(ws: WebSocket, text: string): void {
    if (ws.readyState !== WebSocket.OPEN) return
    sendBatched(ws, this.wires.get(ws), text, (err) => {
      if (err) this.log('warn', `send failed: ${err.message}`)
    })
  }
}

const TLS_OPTIONS = ['ca', 'cert', 'key', 'pfx', 'passphrase', 'rejectUnauthorized'] as const

/** The link's TLS settings, for downloads from the same gateway. */
function tlsOptionsOf(options: ClientOptions): RequestOptions {
  return Object.fromEntries(TLS_OPTIONS.filter((name) => options[name] !== undefined).map((name) => [name, options[name]]))
}
