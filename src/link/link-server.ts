import { randomUUID } from 'node:crypto'
import type { Socket } from 'node:net'
import type { FastifyBaseLogger } from 'fastify'
import WebSocket, { type RawData } from 'ws'
import { CLOSE_CODES } from '../protocol/close-codes.js'
import { MAX_STATUS_BYTES, MAX_UNREGISTERED_FRAME_BYTES } from '../protocol/limits.js'
import { parseDeviceFrame, type RegisterFrame } from '../protocol/frames.js'
import type { LinkOwnership } from './bus/device-bus.js'
import { DeviceLink } from './device-link.js'
import type { LinkMetrics } from './link-metrics.js'
import type { DeviceLinkOptions } from './link-options.js'
import type { LinkRegistry } from './link-registry.js'
import type { LinkStore } from './link-store.js'
import type { StatusWriter } from './status-writer.js'
import type { LinkObserver } from './link-observer.js'

export interface LinkServerDeps {
  store: LinkStore
  bus: LinkOwnership
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
  /** Highest fencing generation seen per device id while a link of it registers here. */
  private readonly highest = new Map<string, number>()
  private closing = false
  private fenceTimer: NodeJS.Timeout | undefined

  constructor(private readonly deps: LinkServerDeps) {
    deps.bus.onTakeover((deviceId, generation) => {
      this.fence(deviceId, generation).catch((err: unknown) => deps.log.warn({ err, deviceId }, 'closing a taken-over link failed'))
    })
    this.fenceTimer = setInterval(() => {
      this.checkFences().catch((err: unknown) => deps.log.warn({ err }, 'link fence check failed'))
    }, deps.options.fenceCheckMs)
    this.fenceTimer.unref()
  }

  /** Takes a freshly upgraded socket through registration and serves it until it closes. */
  accept(socket: WebSocket, wire: Socket): void {
    const remoteAddress = wire.remoteAddress ?? ''
    const { writer, metrics, options } = this.deps
    if (this.closing) return socket.close(CLOSE_CODES.restarting, 'server restarting')
    if (this.unregistered.size >= options.maxAwaitingRegister) return socket.close(CLOSE_CODES.try_again, 'too many links awaiting registration; try again later')
    let phase: Phase = 'waiting'
    let link: DeviceLink | undefined
    const fullPayloadLimit = limitPayload(socket, MAX_UNREGISTERED_FRAME_BYTES)
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
          limitPayload(socket, fullPayloadLimit)
          socket.resume()
          for (const next of queued.splice(0)) if (phase === 'registered') handle(next)
        })
        return
      }
      if (frame.type === 'register') return refuse('already registered')
      if (frame.type === 'heartbeat' && Buffer.byteLength(JSON.stringify(frame.status)) > MAX_STATUS_BYTES) {
        return refuse(`heartbeat status over ${MAX_STATUS_BYTES} bytes of JSON`)
      }
      link!.receive(frame)
      if (frame.type === 'heartbeat') writer.mark(link!)
      this.deps.events?.frame(link!, frame.type)
    }

    socket.on('message', (data: RawData, isBinary: boolean) => {
      if (phase === 'closed') return
      if (isBinary) return refuse('binary frames are not accepted; send JSON text')
      if (phase !== 'registered' && rawLength(data) > MAX_UNREGISTERED_FRAME_BYTES) {
        phase = 'closed'
        return closeSocket(socket, CLOSE_CODES.too_big, `frames before registration are limited to ${MAX_UNREGISTERED_FRAME_BYTES} bytes`)
      }
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
    clearInterval(this.fenceTimer)
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

  /**
   * Registration under a fencing generation (see docs/deploy.md, "One link per device"):
   * admit the key → claim (atomic generation bump in the database) → announce the claim on the
   * bus (after which later claims reach us) → re-read the generation → join the registry unless
   * a higher generation was seen. A higher claim seen at any step closes this link with 4409;
   * a claim that cannot be decided closes it with 1011 (database) or 1013 (bus), unregistered.
   * A refused socket is closed only after this instance stopped answering for the device, so a
   * client that saw the close never reaches a stale holder.
   */
  private async register(socket: WebSocket, wire: Socket, frame: RegisterFrame, remoteAddress: string): Promise<DeviceLink | undefined> {
    const { store, bus, registry, log, enrollToken } = this.deps
    const deviceId = frame.device_id
    this.registering.set(deviceId, (this.registering.get(deviceId) ?? 0) + 1)
    let link: DeviceLink | undefined
    let refusal: { code: number; reason: string } | undefined
    let stage: 'database' | 'bus' = 'database'
    try {
      const verdict = await store.admit(frame, enrollToken)
      if (verdict !== 'accepted') {
        log.warn({ deviceId, verdict }, 'device link refused')
        refusal = { code: CLOSE_CODES.unauthorized, reason: verdict === 'wrong_key' ? 'wrong key for this device id' : 'enroll token required' }
        return undefined
      }
      if (!isOpen(socket)) return undefined
      const identity = { linkId: randomUUID(), deviceId, hostname: frame.hostname, ip: frame.ip ?? displayAddress(remoteAddress), version: frame.version }
      const connectTime = Date.now() / 1000
      const generation = await withTimeout(store.claim(identity, connectTime, bus.instanceId), this.deps.options.claimTimeoutMs)
      if (generation === undefined) {
        refusal = { code: CLOSE_CODES.internal, reason: 'device record removed during registration; link again' }
        return undefined
      }
      link = new DeviceLink(identity, generation, socket, this.deps.metrics, wire, connectTime)
      this.sawGeneration(deviceId, generation)
      stage = 'bus'
      await bus.claim(deviceId, generation)
      stage = 'database'
      if (bus.sharedWithOtherInstances) {
        // Another instance may have claimed the device since our claim: read back who holds it.
        const current = (await withTimeout(store.generations([deviceId]), this.deps.options.claimTimeoutMs)).get(deviceId) ?? 0
        this.sawGeneration(deviceId, current)
      }
      if ((this.highest.get(deviceId) ?? 0) > generation || (registry.get(deviceId)?.generation ?? 0) > generation) {
        log.info({ deviceId, generation }, 'device link superseded by a newer connection while registering')
        refusal = { code: CLOSE_CODES.replaced, reason: REPLACED }
        await store.linkClosed(link)
        return undefined
      }
      if (!isOpen(socket) || this.closing) {
        refusal = { code: CLOSE_CODES.restarting, reason: 'server restarting' }
        await store.linkClosed(link)
        return undefined
      }
      const replaced = registry.add(link)
      replaced?.close(CLOSE_CODES.replaced, REPLACED)
      socket.send(JSON.stringify({ type: 'registered', device_id: deviceId, server_time: Date.now() / 1000 }))
      this.deps.events?.registered(link, replaced !== undefined)
      log.info({ deviceId, ip: identity.ip, version: frame.version, generation }, 'device linked')
      return link
    } catch (err) {
      // Undecided: the link is not registered. 1013 (try again later) when the bus could not
      // carry the claim, 1011 when the database could not record or confirm it.
      log.error({ err, deviceId, stage }, 'device registration failed: ownership could not be decided')
      refusal =
        stage === 'bus'
          ? { code: CLOSE_CODES.try_again, reason: 'ownership could not be announced; try again later' }
          : { code: CLOSE_CODES.internal, reason: 'registration failed' }
      if (link) await store.linkClosed(link).catch(() => undefined)
      return undefined
    } finally {
      const left = this.registering.get(deviceId)! - 1
      if (left > 0) this.registering.set(deviceId, left)
      else {
        this.registering.delete(deviceId)
        this.highest.delete(deviceId)
      }
      await this.releaseIfUnused(deviceId)
      if (refusal) closeSocket(socket, refusal.code, refusal.reason)
    }
  }

  /**
   * A claim of `generation` was made for the device (announced on the bus, or read from the
   * database): a link of a lower generation here is closed with 4409 at once.
   */
  async fence(deviceId: string, generation: number): Promise<void> {
    this.sawGeneration(deviceId, generation)
    const link = this.deps.registry.get(deviceId)
    if (!link || link.generation >= generation) return
    this.deps.log.info({ deviceId, generation: link.generation, newer: generation }, 'device link taken over by a newer connection')
    link.markClosed()
    this.deps.registry.remove(link)
    await this.releaseIfUnused(deviceId)
    link.close(CLOSE_CODES.replaced, REPLACED)
    this.unlink(link)
  }

  /** Backstop for a lost announcement: every link whose generation was passed in the database closes. */
  async checkFences(): Promise<void> {
    const links = this.deps.registry.all()
    if (links.length === 0) return
    const current = await this.deps.store.generations(links.map((l) => l.deviceId))
    for (const link of links) {
      const generation = current.get(link.deviceId)
      if (generation !== undefined && generation > link.generation) await this.fence(link.deviceId, generation)
    }
  }

  /** Remembers the highest generation seen for a device while one of its links registers here. */
  private sawGeneration(deviceId: string, generation: number): void {
    if (!this.registering.has(deviceId)) return
    if (generation > (this.highest.get(deviceId) ?? 0)) this.highest.set(deviceId, generation)
  }

  private unlink(link: DeviceLink): void {
    const { registry, writer, log } = this.deps
    if (link.unlinked) return
    link.unlinked = true
    link.markClosed()
    if (registry.remove(link)) {
      void this.releaseIfUnused(link.deviceId)
      this.deps.events?.closed(link)
    }
    void writer.closed(link)
    log.info({ deviceId: link.deviceId }, 'device link closed')
  }

  /** The bus stops holding an id once no link of it is open here and none is registering. */
  private async releaseIfUnused(deviceId: string): Promise<void> {
    if (!this.deps.registry.get(deviceId) && !this.registering.has(deviceId)) await this.deps.bus.release(deviceId).catch(() => undefined)
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

const REPLACED = 'replaced by a newer connection of this device'

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout
  return Promise.race([promise, new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)))]).finally(() =>
    clearTimeout(timer),
  )
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const displayAddress = (address: string) => (address.startsWith('::ffff:') ? address.slice(7) : address)

/**
 * Sets ws's frame limit of this socket (its receiver's `_maxPayload`, which ws has no public
 * setter for), so an unregistered socket cannot make the server buffer a 16 MiB frame: ws
 * itself closes with 1009 past it. Returns the previous limit. The size check on 'message'
 * stays as the rule's guarantee should ws rename the field.
 */
function limitPayload(socket: WebSocket, bytes: number | undefined): number | undefined {
  const receiver = (socket as unknown as { _receiver?: { _maxPayload?: unknown } })._receiver
  if (!receiver || typeof receiver._maxPayload !== 'number' || bytes === undefined) return undefined
  const previous = receiver._maxPayload
  receiver._maxPayload = bytes
  return previous
}

function rawLength(data: RawData): number {
  if (Array.isArray(data)) return data.reduce((n, part) => n + part.length, 0)
  return Buffer.isBuffer(data) ? data.length : data.byteLength
}

function rawToText(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8')
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8')
  return Buffer.from(data).toString('utf8')
}
