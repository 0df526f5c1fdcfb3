import { once } from 'node:events'
import { createServer, type RequestListener, type Server } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { WebSocketServer, type WebSocket } from 'ws'

type AnyFrame = Record<string, unknown> & { type: string }

/** The gateway side of one device link: frames received, in order, awaited by type. */
export class FakeLink {
  readonly received: AnyFrame[] = []
  readonly closed: Promise<{ code: number; reason: string }>
  private readonly queue: AnyFrame[] = []
  private waiters: { type: string; resolve: (frame: AnyFrame) => void }[] = []

  constructor(
    readonly ws: WebSocket,
    /** The connection's socket (cork it to send several frames in one write). */
    readonly wire?: Socket,
  ) {
    ws.on('message', (data) => {
      const frame = JSON.parse(data.toString()) as AnyFrame
      this.received.push(frame)
      const waiter = this.waiters.find((w) => w.type === frame.type)
      if (waiter) {
        this.waiters = this.waiters.filter((w) => w !== waiter)
        waiter.resolve(frame)
      } else this.queue.push(frame)
    })
    this.closed = once(ws, 'close').then(([code, reason]) => ({ code: code as number, reason: String(reason) }))
  }

  /** The next frame of this type not yet taken (frames of other types stay queued). */
  nextFrame<T extends AnyFrame = AnyFrame>(type: string): Promise<T> {
    const index = this.queue.findIndex((f) => f.type === type)
    if (index >= 0) return Promise.resolve(this.queue.splice(index, 1)[0] as T)
    return new Promise((resolve) => this.waiters.push({ type, resolve: resolve as (f: AnyFrame) => void }))
  }

  send(frame: unknown): void {
    this.ws.send(JSON.stringify(frame))
  }

  /** Waits for `register` and answers `registered`. */
  async acceptRegistration(): Promise<AnyFrame> {
    const register = await this.nextFrame('register')
    this.send({ type: 'registered', device_id: register.device_id, server_time: Date.now() / 1000 })
    return register
  }

  request(id: string, method: string, path: string, body: unknown = null, query: Record<string, string> = {}): void {
    this.send({ type: 'request', id, method, path, query, body, user: { id: 'admin', username: 'admin', role: 'admin' } })
  }

  async response(id: string): Promise<AnyFrame> {
    for (;;) {
      const frame = await this.nextFrame('response')
      if (frame.id === id) return frame
      this.queue.push(frame)
    }
  }
}

/**
 * A minimal gateway: a WebSocket server on a free port that hands out each new link; plain HTTP
 * requests on the same port go to `http` (404 without it), as firmware downloads do.
 */
export class FakeGateway {
  readonly links: FakeLink[] = []
  private pending: ((link: FakeLink) => void)[] = []
  private unclaimed: FakeLink[] = []

  private constructor(
    private readonly server: Server,
    private readonly wss: WebSocketServer,
    readonly url: string,
  ) {
    wss.on('connection', (ws, request) => {
      const link = new FakeLink(ws, request.socket)
      this.links.push(link)
      const waiter = this.pending.shift()
      if (waiter) waiter(link)
      else this.unclaimed.push(link)
    })
  }

  static async start(options: { http?: RequestListener } = {}): Promise<FakeGateway> {
    const server = createServer(options.http ?? ((_, res) => res.writeHead(404).end()))
    const wss = new WebSocketServer({ server, path: '/api/v1/device-link' })
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    return new FakeGateway(server, wss, `http://127.0.0.1:${(server.address() as AddressInfo).port}`)
  }

  nextLink(): Promise<FakeLink> {
    const link = this.unclaimed.shift()
    if (link) return Promise.resolve(link)
    return new Promise((resolve) => this.pending.push(resolve))
  }

  async close(): Promise<void> {
    for (const client of this.wss.clients) client.terminate()
    await new Promise<void>((resolve) => this.wss.close(() => resolve()))
    this.server.closeAllConnections()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }
}
