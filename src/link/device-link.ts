import type { Socket } from 'node:net'
import { nowSeconds } from '../lib/time.js'
import type WebSocket from 'ws'
import { AppError } from '../errors.js'
import { MAX_IN_FLIGHT, requestFrameFields, requestFrameHead, RequestIds, sendBatched, type FirmwareOfferFrame, type FirmwareStatusFrame, type HeartbeatFrame, type ProductionFrame, type ResponseFrame } from '@fleetgate/device-agent/protocol'
import type { DeviceAnswer, DeviceCall } from './bus/device-bus.js'
import type { LinkMetrics } from './link-metrics.js'
import type { LiveState } from './live-state.js'

interface Pending {
  resolve(answer: DeviceAnswer): void
  reject(error: AppError): void
  timer: NodeJS.Timeout
}

export interface LinkIdentity {
  linkId: string
  deviceId: string
  hostname: string
  ip: string
  version: string
  /** The register frame's rated placements per hour (§16); absent when it named none. */
  ratedCph?: number
}

/**
 * Where a registered link is, the one place its end is recorded:
 * - `open`: requests and offers go out on its socket.
 * - `closed`: the socket is closing or closed (by either side, or taken over); every request
 *   fails at once with 502 and none is sent.
 * - `unlinked`: the server's bookkeeping for the end is done too (registry, bus, last heartbeat,
 *   events), exactly once, whichever of the socket's close and a takeover came first.
 */
export type DeviceLinkState = 'open' | 'closed' | 'unlinked'

/**
 * One registered device connection: sends requests and matches the answers that come back
 * on this same socket, counts frames, remembers the latest heartbeat and watches its pings.
 */
export class DeviceLink {
  lastFrameAt = Date.now()
  lastHeartbeat: number | null = null
  lastStatus: Record<string, unknown> = {}
  messagesSent = 0
  messagesReceived = 0
  /** Created by the first request: an idle link holds neither. */
  private pending: Map<string, Pending> | undefined
  private ids: RequestIds | undefined
  private current: DeviceLinkState = 'open'
  /** Consecutive pings without a pong. */
  private missedPongs = 0
  private awaitingPong = false

  constructor(
    readonly identity: LinkIdentity,
    /** Fencing generation of this link's claim: a link of a higher generation replaces it. */
    readonly generation: number,
    readonly socket: WebSocket,
    private readonly metrics: LinkMetrics,
    /** The upgraded connection's socket, for batched writes. */
    readonly wire?: Socket,
    readonly connectTime = nowSeconds(),
  ) {}

  get deviceId(): string {
    return this.identity.deviceId
  }

  get state(): DeviceLinkState {
    return this.current
  }

  get inFlight(): number {
    return this.pending?.size ?? 0
  }

  request(call: DeviceCall, timeoutMs: number): Promise<DeviceAnswer> {
    return this.requestFields(requestFrameFields(call), timeoutMs)
  }

  /** `request` with the call already written as its frame's fields (`requestFrameFields`), as another instance sends it. */
  requestFields(fields: string, timeoutMs: number): Promise<DeviceAnswer> {
    if (this.current !== 'open') return Promise.reject(unavailable(this.deviceId))
    const pending = (this.pending ??= new Map())
    if (pending.size >= MAX_IN_FLIGHT) {
      return Promise.reject(new AppError('server_busy', `Device ${this.deviceId} already has ${MAX_IN_FLIGHT} requests in flight`))
    }
    const id = (this.ids ??= new RequestIds()).next()
    return new Promise<DeviceAnswer>((resolve, reject) => {
      const timer = setTimeout(() => {
        if (this.settle(id)) reject(new AppError('device_timeout', `Device ${this.deviceId} did not answer within ${timeoutMs} ms`))
      }, timeoutMs)
      pending.set(id, { resolve, reject, timer })
      this.messagesSent++
      sendBatched(this.socket, this.wire, requestFrameHead(id) + fields, (err) => {
        if (err && this.settle(id)) reject(unavailable(this.deviceId))
      })
    })
  }

  /** A JSON frame arrived after registration (heartbeat, response, firmware status or production). */
  receive(frame: HeartbeatFrame | ResponseFrame | FirmwareStatusFrame | ProductionFrame): void {
    this.lastFrameAt = Date.now()
    this.messagesReceived++
    if (frame.type === 'firmware-status' || frame.type === 'production') return
    if (frame.type === 'heartbeat') {
      this.lastHeartbeat = this.lastFrameAt / 1000
      this.lastStatus = frame.status
      return
    }
    const entry = this.pending?.get(frame.id)
    if (!entry || !this.settle(frame.id)) {
      this.metrics.unknownResponses.inc()
      return
    }
    entry.resolve({ status: frame.status, data: frame.data })
  }

  /** Marks the link closed and fails every pending request at once with 502. */
  markClosed(): void {
    if (this.current !== 'open') return
    this.current = 'closed'
    const pending = this.pending
    if (!pending) return
    for (const [id, entry] of [...pending]) {
      if (this.settle(id)) entry.reject(unavailable(this.deviceId))
    }
  }

  /** Sends a firmware offer (§4 step 6); resolves once written, rejects when the link is gone. */
  offerFirmware(frame: FirmwareOfferFrame): Promise<void> {
    if (this.current !== 'open') return Promise.reject(unavailable(this.deviceId))
    this.messagesSent++
    return new Promise((resolve, reject) => sendBatched(this.socket, this.wire, JSON.stringify(frame), (err) => (err ? reject(unavailable(this.deviceId)) : resolve())))
  }

  /**
   * Marks the link closed if it is not yet, then `unlinked`; true only for the call that made
   * the move, so the server's bookkeeping for the end runs once.
   */
  markUnlinked(): boolean {
    if (this.current === 'unlinked') return false
    this.markClosed()
    this.current = 'unlinked'
    return true
  }

  /** Closes the socket; pending requests fail at once. */
  close(code: number, reason: string): void {
    this.markClosed()
    try {
      this.socket.close(code, reason.slice(0, 120))
    } catch {
      this.socket.terminate()
    }
  }

  /**
   * One period of the ping watch: pings the device, or terminates the link when the last two
   * pings went unanswered. A device that sent a frame at or after `heardSince` (ms) and owes no
   * pong is not pinged: the frame proved it alive, and a heartbeating fleet is spared most pings.
   * A ping once sent is followed up as before, so two unanswered in a row still end the link.
   */
  pingOrGiveUp(heardSince: number): void {
    if (!this.awaitingPong && this.lastFrameAt >= heardSince) return
    if (this.awaitingPong && ++this.missedPongs >= 2) return this.terminate()
    this.awaitingPong = true
    this.socket.ping()
  }

  /** The device answered a ping. */
  pong(): void {
    this.awaitingPong = false
    this.missedPongs = 0
  }

  isAlive(aliveMs: number, now = Date.now()): boolean {
    return this.current === 'open' && now - this.lastFrameAt <= aliveMs
  }

  snapshot(aliveMs: number): LiveState {
    const { hostname, ip, version } = this.identity
    return {
      hostname,
      ip,
      version,
      connect_time: this.connectTime,
      last_heartbeat: this.lastHeartbeat,
      last_status: this.lastStatus,
      messages_sent: this.messagesSent,
      messages_received: this.messagesReceived,
      alive: this.isAlive(aliveMs),
    }
  }

  /** Drops the connection without a close handshake; pending requests fail at once. */
  private terminate(): void {
    this.markClosed()
    this.socket.terminate()
  }

  /** Removes a pending request; false when it was already settled. */
  private settle(id: string): boolean {
    const entry = this.pending?.get(id)
    if (!entry) return false
    clearTimeout(entry.timer)
    this.pending!.delete(id)
    return true
  }
}

export const unavailable = (deviceId: string) => new AppError('device_unavailable', `Device ${deviceId} is not connected`)
