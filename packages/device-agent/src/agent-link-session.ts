import type { Socket } from 'node:net'
import WebSocket, { type RawData } from 'ws'
import type { AgentLog } from './device-agent.js'
import { FrameError, parseGatewayFrame, type DeviceFrame, type FirmwareOfferFrame, type FirmwareStatusFrame, type RegisteredFrame, type RegisterFrame, type RequestFrame } from './protocol/frames.js'
import { sendBatched } from './protocol/batched-send.js'
import { responseFrameText } from './protocol/frame-text.js'
import { MAX_FRAME_BYTES } from './protocol/limits.js'
import { rawDataText } from './protocol/raw-data.js'
import type { RouteTable } from './route-table.js'
import type { TaskQueue } from './task-queue.js'

/**
 * Where one connection attempt of the agent is (contract §4):
 * - `connecting`: the socket is opening.
 * - `registering`: open, the register frame sent; waiting for `registered`, within the time limit.
 * - `registered`: heartbeats go out, requests and firmware offers are taken.
 * - `closed`: the socket closed or is closing; its timers are stopped and its frames ignored.
 */
export type AgentLinkState = 'connecting' | 'registering' | 'registered' | 'closed'

export const AGENT_LINK_TRANSITIONS = {
  connecting: ['registering', 'closed'],
  registering: ['registered', 'closed'],
  registered: ['closed'],
  closed: [],
} as const satisfies Record<AgentLinkState, readonly AgentLinkState[]>

/** A socket the agent asked to close gets this long to finish the closing handshake. */
const CLOSE_HANDSHAKE_MS = 2000

/** What a session needs of the agent: its settings, and what it reports. */
export interface AgentLinkHost {
  readonly registerFrame: RegisterFrame
  readonly registerTimeoutMs: number
  readonly heartbeatMs: number
  readonly stableLinkMs: number
  readonly routes: RouteTable
  /** Runs request handlers within the agent's limit; handlers may outlive their link, so it spans links. */
  readonly requests: TaskQueue
  readonly log: AgentLog
  heartbeatStatus(): Promise<Record<string, unknown>>
  registered(frame: RegisteredFrame): void
  /** The link stayed registered for `stableLinkMs`. */
  stable(): void
  /** The link's first heartbeat is out: frames that must follow it (kept firmware statuses) may go. */
  ready(): void
  request(frame: RequestFrame): void
  firmwareOffer(frame: FirmwareOfferFrame): void
  /** The socket closed, whoever closed it; reported once. */
  closed(session: AgentLinkSession, code: number, reason: string): void
}

/** One connection attempt of the device agent, from its socket's opening until the socket closes. */
export class AgentLinkSession {
  private current: AgentLinkState = 'connecting'
  /** The connection's socket, from the 'upgrade' response, for batched writes. */
  private wire: Socket | undefined
  private registerTimer: NodeJS.Timeout | undefined
  private heartbeatTimer: NodeJS.Timeout | undefined
  private stableTimer: NodeJS.Timeout | undefined
  private closeHandshakeTimer: NodeJS.Timeout | undefined
  /** Registered and the first heartbeat sent. */
  private ready = false
  private beating = false
  private readonly socketClosed: Promise<void>

  constructor(
    private readonly socket: WebSocket,
    private readonly host: AgentLinkHost,
  ) {
    socket.on('upgrade', (response) => (this.wire = response.socket))
    socket.on('open', () => this.onOpen())
    socket.on('message', (data: RawData, isBinary: boolean) => this.onMessage(data, isBinary))
    socket.on('error', (err: Error) => host.log('warn', `device link error: ${err.message}`))
    this.socketClosed = new Promise((resolve) => {
      socket.on('close', (code: number, reason: Buffer) => {
        this.onSocketClosed(code, reason.toString())
        resolve()
      })
    })
  }

  get state(): AgentLinkState {
    return this.current
  }

  /** Closes the session at once and the socket with `code`; resolves once the socket has closed. */
  close(code: number, reason: string): Promise<void> {
    this.moveTo('closed')
    if (this.socket.readyState !== WebSocket.CLOSED && this.closeHandshakeTimer === undefined) {
      this.closeHandshakeTimer = setTimeout(() => this.socket.terminate(), CLOSE_HANDSHAKE_MS)
      this.closeHandshakeTimer.unref()
      this.socket.close(code, reason)
    }
    return this.socketClosed
  }

  /** Sends a firmware status when the link is registered and its first heartbeat is out. */
  sendIfReady(frame: FirmwareStatusFrame): boolean {
    if (!this.ready || this.socket.readyState !== WebSocket.OPEN) return false
    this.send(frame)
    return true
  }

  /** The one place the state changes; a move the table does not allow is refused. */
  private moveTo(next: AgentLinkState): boolean {
    if (!(AGENT_LINK_TRANSITIONS[this.current] as readonly AgentLinkState[]).includes(next)) return false
    this.current = next
    if (next === 'closed') this.release()
    return true
  }

  private release(): void {
    clearTimeout(this.registerTimer)
    clearInterval(this.heartbeatTimer)
    clearTimeout(this.stableTimer)
    this.ready = false
  }

  private onOpen(): void {
    if (!this.moveTo('registering')) return
    this.send(this.host.registerFrame)
    this.registerTimer = setTimeout(() => {
      this.host.log('warn', `no registered frame within ${this.host.registerTimeoutMs} ms; reconnecting`)
      this.moveTo('closed')
      this.socket.terminate()
    }, this.host.registerTimeoutMs)
  }

  private onRegistered(frame: RegisteredFrame): void {
    if (!this.moveTo('registered')) return this.host.log('warn', 'ignored an unexpected registered frame')
    clearTimeout(this.registerTimer)
    // A link the gateway drops soon after registering (a refused heartbeat, say) must not start the back-off over.
    this.stableTimer = setTimeout(() => this.host.stable(), this.host.stableLinkMs)
    void this.beat()
    this.heartbeatTimer = setInterval(() => void this.beat(), this.host.heartbeatMs)
    this.host.registered(frame)
  }

  private onMessage(data: RawData, isBinary: boolean): void {
    if (this.current === 'closed') return
    if (isBinary) return this.host.log('warn', 'ignored a binary frame')
    const text = rawDataText(data)
    let frame
    try {
      frame = parseGatewayFrame(text)
    } catch (err) {
      this.host.log('warn', `ignored a frame: ${(err as Error).message}`)
      if (err instanceof FrameError && err.frameType === 'request' && this.current === 'registered') this.answerMalformedRequest(text, err)
      return
    }
    if (frame.type === 'registered') return this.onRegistered(frame)
    if (this.current !== 'registered') return this.host.log('warn', `ignored a ${frame.type} frame before registration`)
    if (frame.type === 'firmware-offer') return this.host.firmwareOffer(frame)
    // Production reporting (§16) is not sent by this agent yet: an acknowledgement has nothing to settle.
    if (frame.type === 'production-ack') return
    this.host.request(frame)
    this.host.requests.push(() => this.serve(frame))
  }

  private async beat(): Promise<void> {
    if (this.beating) return
    this.beating = true
    try {
      const status = await this.host.heartbeatStatus()
      if (this.current !== 'registered') return
      this.send({ type: 'heartbeat', status })
      if (!this.ready) {
        this.ready = true
        this.host.ready()
      }
    } finally {
      this.beating = false
    }
  }

  private async serve(frame: RequestFrame): Promise<void> {
    // A request queued on a link that has since closed was already failed by the gateway.
    if (this.current !== 'registered') return
    const { method, path, query, body, user } = frame
    const result = await this.host.routes.dispatch({ method, path, query, body, user })
    this.respond(frame.id, result.status, result.data)
  }

  private respond(id: string, status: number, data: unknown): void {
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
    this.sendText(text)
  }

  /** A request with a usable id but a bad shape gets a 400 instead of leaving the gateway to time out. */
  private answerMalformedRequest(text: string, err: FrameError): void {
    const id = (JSON.parse(text) as { id?: unknown }).id
    if (typeof id === 'string' && id.length > 0) this.respond(id, 400, { error: 'bad_request', message: err.message })
  }

  private onSocketClosed(code: number, reason: string): void {
    clearTimeout(this.closeHandshakeTimer)
    this.moveTo('closed')
    this.host.closed(this, code, reason)
  }

  private send(frame: DeviceFrame): void {
    this.sendText(JSON.stringify(frame))
  }

  private sendText(text: string): void {
    if (this.current === 'closed' || this.socket.readyState !== WebSocket.OPEN) return
    sendBatched(this.socket, this.wire, text, (err) => {
      if (err) this.host.log('warn', `send failed: ${err.message}`)
    })
  }
}
