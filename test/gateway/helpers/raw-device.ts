import { once } from 'node:events'
import WebSocket from 'ws'
import type { RequestFrame } from '@fleetgate/device-agent/protocol'

export type Answer = { status: number; data: unknown } | undefined
export type RequestHandler = (frame: RequestFrame) => Answer | Promise<Answer>

export interface RegisterFields {
  device_id: string
  key?: string
  hostname?: string
  version?: string
  ip?: string
  enroll_token?: string
}

export const DEVICE_KEY = 'device-key-0123456789abcdef'

/** Echoes the request back, so tests see exactly what reached the device. */
export const echo: RequestHandler = (frame) => ({ status: 200, data: { echo: frame } })

/**
 * A device speaking the link protocol with `ws` directly, so tests control every frame.
 * Requests are answered by `handler` (undefined: no answer).
 */
export class RawDevice {
  readonly socket: WebSocket
  readonly received: Record<string, unknown>[] = []
  readonly requests: RequestFrame[] = []
  handler: RequestHandler = echo
  /** Resolves with the close code and reason once the link is closed. */
  readonly closed: Promise<{ code: number; reason: string }>
  private waiters: { match: (f: Record<string, unknown>) => boolean; resolve: (f: Record<string, unknown>) => void }[] = []

  private constructor(socket: WebSocket) {
    this.socket = socket
    this.closed = once(socket, 'close').then(([code, reason]) => ({ code: code as number, reason: String(reason) }))
    socket.on('error', () => undefined)
    socket.on('message', (data) => {
      const frame = JSON.parse(String(data)) as Record<string, unknown>
      this.received.push(frame)
      this.waiters = this.waiters.filter((w) => {
        if (!w.match(frame)) return true
        w.resolve(frame)
        return false
      })
      if (frame.type === 'request') void this.answer(frame as unknown as RequestFrame)
    })
  }

  static async open(linkUrl: string, options: WebSocket.ClientOptions = {}): Promise<RawDevice> {
    const socket = new WebSocket(linkUrl, options)
    const device = new RawDevice(socket)
    await once(socket, 'open')
    return device
  }

  /** Opens a link and registers; resolves once `registered` arrived. */
  static async link(linkUrl: string, fields: RegisterFields, handler: RequestHandler = echo, options: WebSocket.ClientOptions = {}): Promise<RawDevice> {
    const device = await RawDevice.open(linkUrl, options)
    device.handler = handler
    const registered = await device.register(fields)
    if (registered.type !== 'registered') throw new Error(`registration failed: ${JSON.stringify(registered)}`)
    return device
  }

  /** Sends a register frame and resolves with `registered`, or rejects with the close code. */
  async register(fields: RegisterFields): Promise<Record<string, unknown>> {
    const answer = this.next((f) => f.type === 'registered')
    this.send({ type: 'register', key: DEVICE_KEY, hostname: fields.device_id, version: '1.0.0', ...fields })
    return Promise.race([
      answer,
      this.closed.then(({ code, reason }) => {
        throw new Error(`closed ${code} ${reason}`)
      }),
    ])
  }

  next(match: (f: Record<string, unknown>) => boolean = () => true): Promise<Record<string, unknown>> {
    return new Promise((resolve) => this.waiters.push({ match, resolve }))
  }

  /** Resolves with the next request frame the gateway sends. */
  nextRequest(): Promise<RequestFrame> {
    return this.next((f) => f.type === 'request') as Promise<unknown> as Promise<RequestFrame>
  }

  send(frame: unknown): void {
    this.socket.send(typeof frame === 'string' ? frame : JSON.stringify(frame))
  }

  heartbeat(status: Record<string, unknown>): void {
    this.send({ type: 'heartbeat', status })
  }

  respond(id: unknown, status: number, data: unknown): void {
    this.send({ type: 'response', id, status, data })
  }

  async close(): Promise<void> {
    if (this.socket.readyState === WebSocket.CLOSED) return
    this.socket.close(1000)
    await this.closed
  }

  private async answer(frame: RequestFrame): Promise<void> {
    this.requests.push(frame)
    const answer = await this.handler(frame)
    if (answer && this.socket.readyState === WebSocket.OPEN) this.respond(frame.id, answer.status, answer.data)
  }
}

let counter = 0
/** A device id unique to this test process (NATS subjects are shared by every test run). */
export const uniqueDeviceId = (prefix = 'pnp') => `${prefix}-${process.pid}-${Date.now().toString(36)}-${++counter}`
