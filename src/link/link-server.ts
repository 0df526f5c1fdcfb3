import { randomUUID } from 'node:crypto'
import type { Socket } from 'node:net'
import type { FastifyBaseLogger } from 'fastify'
import WebSocket, { type RawData } from 'ws'
import { CLOSE_CODES } from '../errors.js'
import { parseDeviceFrame, type RegisterFrame } from '../protocol/frames.js'
import type { DeviceBus } from './bus/device-bus.js'
import { DeviceLink } from './device-link.js'
import type { LinkMetrics } from './link-metrics.js'
import type { DeviceLinkOptions } from './link-options.js'
import type { LinkRegistry } from './link-registry.js'
import type { LinkStore } from './link-store.js'
import type { StatusWriter } from './status-writer.js'
import type { LinkObserver } from './link-observer.js'

export interface LinkServerDeps {
  store: LinkStore
  bus: DeviceBus
  registry: LinkRegistry
  writer: StatusWriter
  metrics: LinkMetrics
  options: Required<DeviceLinkOptions>
  enrollToken: string | undefined
  log: FastifyBaseLogger
  /** Announces registrations, closes, alive changes and heartbeats to the event streams. */
  events?: LinkObserver
}

type Phase = 'waiting' | 'registering' | 'registered' | 'closed'

const CLOSE_WAIT_MS = 1000

/** The socket side of the device link (contract §4): registration, frames, close codes. */
export class LinkServer {
  private readonly unregistered = new Set<WebSocket>()
  /** Registrations under way per device id: the bus keeps holding an id while one may still link it. */
  private readonly registering = new Map<string, number>()
  private closing = false

  constructor(private readonly deps: LinkServerDeps) {}

  /** Takes a freshly upgraded socket through registration and serves it until it closes. */
  accept(socket: WebSocket, wire: Socket): void {
    const remoteAddress = wire.remoteAddress ?? ''
    const { writer, metrics, options } = this.deps
    if (this.closing) return socket.close(CLOSE_CODES.restarting, 'server restarting')
    let phase: Phase = 'waiting'
    let link: DeviceLink | undefined
    const queued: string[] = []
    this.unregistered.add(socket)
    const timer = setTimeout(() => {
      if (phase === 'waiting') closeSocket(socket, CLOSE_CODES.register_timeout, 'no register frame within the time limit')
    }, options.registerTimeoutMs)

    const refuse = (reason: string) => {
      phase = 'closed'
      closeSocket(socket, CLOSE_CODES.bad_frame, reason)
    }

    const handle = (text: string) => {
      let frame
      try {
        frame = parseDeviceFrame(text)
      } catch (err) {
        return refuse((err as Error).message)
      }
      if (phase === 'waiting') {
        if (frame.type !== 'register') return refuse('the first frame must be register')
        phase = 'registering'
        clearTimeout(timer)
        void this.register(socket, wire, frame, remoteAddress).then((registered) => {
          this.unregistered.delete(socket)
          if (!registered) {
            // Refused: the socket must read again to finish the close handshake.
            phase = 'closed'
            socket.resume()
            return
          }
          if (phase === 'closed') return this.unlink(registered)
          link = registered
          phase = 'registered'
          socket.resume()
          for (const next of queued.splice(0)) if (phase === 'registered') handle(next)
        })
        return
      }
      if (frame.type === 'register') return refuse('already registered')
      link!.receive(frame)
      if (frame.type === 'heartbeat') writer.mark(link!)
      this.deps.events?.frame(link!, frame.type)
    }

    socket.on('message', (data: RawData, isBinary: boolean) => {
      if (phase === 'closed') return
      if (isBinary) return refuse('binary frames are not accepted; send JSON text')
      const text = rawToText(data)
      if (phase === 'registering') {
        // Frames sent right behind the register frame wait for its outcome; the socket stops reading meanwhile.
        queued.push(text)
        socket.pause()
        return
      }
      handle(text)
    })
    socket.on('pong', () => {
      if (!link) return
      link.awaitingPong = false
      link.missedPongs = 0
    })
    socket.on('close', (code: number) => {
      phase = 'closed'
      clearTimeout(timer)
      this.unregistered.delete(socket)
      metrics.closes.inc({ code: String(code) })
      if (link) this.unlink(link)
    })
    // Errors (oversized frame → 1009, protocol errors) are followed by 'close'; nothing else to do.
    socket.on('error', () => undefined)
  }

  /**
   * Stops accepting links, lets in-flight requests finish (bounded), closes every link with
   * 1012 and writes what is pending.
   */
  async shutdown(): Promise<void> {
    const { registry, writer, options } = this.deps
    this.closing = true
    registry.stopPinging()
    const deadline = Date.now() + options.shutdownGraceMs
    while (registry.inFlight() > 0 && Date.now() < deadline) await delay(25)
    const sockets: WebSocket[] = [...this.unregistered]
    for (const socket of sockets) closeSocket(socket, CLOSE_CODES.restarting, 'server restarting')
    const links = registry.all()
    for (const link of links) link.close(CLOSE_CODES.restarting, 'server restarting')
    await Promise.all([...sockets.map(closed), ...links.map((l) => closed(l.socket))])
    await writer.drain()
    writer.stop()
  }

  private async register(socket: WebSocket, wire: Socket, frame: RegisterFrame, remoteAddress: string): Promise<DeviceLink | undefined> {
    const { store, bus, registry, log, enrollToken } = this.deps
    const deviceId = frame.device_id
    this.registering.set(deviceId, (this.registering.get(deviceId) ?? 0) + 1)
    try {
      const verdict = await store.admit(frame, enrollToken)
      if (verdict !== 'accepted') {
        log.warn({ deviceId, verdict }, 'device link refused')
        closeSocket(socket, CLOSE_CODES.unauthorized, verdict === 'wrong_key' ? 'wrong key for this device id' : 'enroll token required')
        return undefined
      }
      if (!isOpen(socket)) return undefined
      await bus.claim(deviceId)
      const identity = { linkId: randomUUID(), deviceId, hostname: frame.hostname, ip: frame.ip ?? displayAddress(remoteAddress), version: frame.version }
      const link = new DeviceLink(identity, socket, this.deps.metrics, wire)
      await store.linkOpened(link, bus.instanceId)
      if (!isOpen(socket) || this.closing) {
        await store.linkClosed(link)
        if (isOpen(socket)) closeSocket(socket, CLOSE_CODES.restarting, 'server restarting')
        return undefined
      }
      const replaced = registry.add(link)
      replaced?.close(CLOSE_CODES.replaced, 'replaced by a newer connection of this device')
      socket.send(JSON.stringify({ type: 'registered', device_id: deviceId, server_time: Date.now() / 1000 }))
      this.deps.events?.registered(link, replaced !== undefined)
      log.info({ deviceId, ip: identity.ip, version: frame.version }, 'device linked')
      return link
    } catch (err) {
      log.error({ err, deviceId }, 'device registration failed')
      closeSocket(socket, 1011, 'registration failed')
      return undefined
    } finally {
      const left = this.registering.get(deviceId)! - 1
      if (left > 0) this.registering.set(deviceId, left)
      else this.registering.delete(deviceId)
      this.releaseIfUnused(deviceId)
    }
  }

  private unlink(link: DeviceLink): void {
    const { registry, writer, log } = this.deps
    link.markClosed()
    if (registry.remove(link)) {
      this.releaseIfUnused(link.deviceId)
      this.deps.events?.closed(link)
    }
    void writer.closed(link)
    log.info({ deviceId: link.deviceId }, 'device link closed')
  }

  /** The bus stops holding an id once no link of it is open here and none is registering. */
  private releaseIfUnused(deviceId: string): void {
    if (!this.deps.registry.get(deviceId) && !this.registering.has(deviceId)) this.deps.bus.release(deviceId)
  }
}

function closeSocket(socket: WebSocket, code: number, reason: string): void {
  if (socket.readyState === WebSocket.CLOSED) return
  try {
    socket.close(code, reason.slice(0, 120))
  } catch {
    socket.terminate()
  }
}

const isOpen = (socket: WebSocket) => socket.readyState === WebSocket.OPEN

/** Resolves once the socket closed, terminating it if the peer does not finish the close handshake soon. */
function closed(socket: WebSocket): Promise<void> {
  if (socket.readyState === WebSocket.CLOSED) return Promise.resolve()
  return new Promise((resolve) => {
    const force = setTimeout(() => socket.terminate(), CLOSE_WAIT_MS)
    socket.once('close', () => {
      clearTimeout(force)
      resolve()
    })
  })
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const displayAddress = (address: string) => (address.startsWith('::ffff:') ? address.slice(7) : address)

function rawToText(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8')
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8')
  return Buffer.from(data).toString('utf8')
}
