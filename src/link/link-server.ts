import { randomUUID } from 'node:crypto'
import type { Socket } from 'node:net'
import type { FastifyBaseLogger } from 'fastify'
import WebSocket from 'ws'
import { CLOSE_CODES, MAX_UNREGISTERED_FRAME_BYTES, type CloseCode, type FirmwareStatusFrame, type RegisterFrame } from '@fleetgate/device-agent/protocol'
import type { LinkOwnership } from './bus/device-bus.js'
import { DeviceLink } from './device-link.js'
import type { LinkMetrics } from './link-metrics.js'
import type { DeviceLinkOptions } from './link-options.js'
import type { LinkRegistry } from './link-registry.js'
import type { AdmitVerdict, LinkClaim, LinkStore } from './link-store.js'
import { CallBatcher } from '../lib/call-batcher.js'
import type { StatusWriter } from './status-writer.js'
import type { LinkObserver } from './link-observer.js'
import type { ProductionReceiver } from './production-receiver.js'
import { LinkSession, type LinkSessionHost, type Registration } from './link-session.js'
import { RegistrationsUnderWay } from './registrations-under-way.js'
import { cutOffAfterClose, FrameByteLimit } from './frame-byte-limit.js'
import { PeriodicTask } from '../lib/periodic-task.js'
import { delay, nowSeconds, withTimeout } from '../lib/time.js'

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
  /** Takes `firmware-status` reports (§14). */
  firmwareStatus?: (link: DeviceLink, frame: FirmwareStatusFrame) => void
  /** Takes `production` frames and hears of closed links (§16). */
  production?: ProductionReceiver
  /** Runs first at shutdown, before any link closes (what sends on links stops here). */
  beforeLinksClose?: () => Promise<void>
}

const CLOSE_WAIT_MS = 1000
/** How much longer than its deadline a registration waits for its claim: the commit after the statement. */
const CLAIM_COMMIT_GRACE_MS = 2000
/**
 * Registrations per database statement, statements of one step running at once, and how long a
 * registration waits for others to share its statement (each of the three steps). Without the
 * wait, a fleet re-linking at a few hundred a second per instance went one or two to a statement:
 * on PostgreSQL a claim alone is four round trips (begin, time-out, update, commit).
 */
const REGISTRATION_BATCHES = { maxBatch: 500, concurrency: 2, lingerMs: 20 }
/**
 * The fence check reads the claims made since its previous pass began, plus an overlap: claims
 * are stamped with the database's clock when their statement runs and commit after it, so the
 * overlap is the longest a claim's statement may run (claimTimeoutMs) plus this margin for its
 * commit. A wider overlap makes every instance read each claim of a re-linking fleet once more
 * per extra pass (docs/coordination.md).
 */
export const FENCE_CHECK_COMMIT_MARGIN_S = 10

/** The socket side of the device link (contract §4): admission, registration, fencing, shutdown. */
export class LinkServer {
  /** Sessions whose registration is not decided yet, with the client address each came from. */
  private readonly awaiting = new Map<LinkSession, string>()
  /** How many of `awaiting` came from each client address (addresses with none are removed). */
  private readonly awaitingByAddress = new Map<string, number>()
  /** Registrations under way per device id (the bus keeps holding an id while one may still link it), and the generations they saw. */
  private readonly registering = new RegistrationsUnderWay()
  private readonly sessionHost: LinkSessionHost
  private closing = false
  /** Backstop for a lost takeover notice: reads the claims made since its last pass. */
  private readonly fenceCheck: PeriodicTask
  /** When the last fence check that succeeded began, on this instance's monotonic clock: the next reads the claims since (a duration is all it measures). */
  private fencesCheckedAt = performance.now()
  /** The database steps of registrations under way go in batches: one statement per step for many links. */
  private readonly admissions: CallBatcher<RegisterFrame, AdmitVerdict>
  private readonly claims: CallBatcher<LinkClaim, number | undefined>
  private readonly readBacks: CallBatcher<string, number>

  constructor(private readonly deps: LinkServerDeps) {
    deps.bus.onTakeover((deviceId, generation) => {
      this.fence(deviceId, generation).catch((err: unknown) => deps.log.warn({ err, deviceId }, 'closing a taken-over link failed'))
    })
    this.fenceCheck = new PeriodicTask(
      () => this.checkFences(),
      (err) => deps.log.warn({ err }, 'link fence check failed'),
    )
    const { store, bus, enrollToken } = deps
    this.admissions = new CallBatcher((frames) => store.admitAll(frames, enrollToken), REGISTRATION_BATCHES)
    this.claims = new CallBatcher((claims, batch) => store.claimAll(claims, bus.instanceId, batch.deadline), REGISTRATION_BATCHES)
    this.readBacks = new CallBatcher(async (ids) => {
      const current = await store.generations(ids)
      return ids.map((id) => current.get(id) ?? 0)
    }, REGISTRATION_BATCHES)
    this.sessionHost = {
      registerTimeoutMs: deps.options.registerTimeoutMs,
      writer: deps.writer,
      events: deps.events,
      firmwareStatus: deps.firmwareStatus,
      production: deps.production,
      register: (socket, wire, frame, remoteAddress) => this.register(socket, wire, frame, remoteAddress),
      stoppedAwaiting: (session) => this.stopAwaiting(session),
      socketClosed: (session, code) => {
        this.stopAwaiting(session)
        deps.metrics.closes.inc({ code: String(code) })
      },
      unlink: (link) => this.unlink(link),
    }
  }

  /** Starts the periodic fence check; links are accepted from construction on. */
  start(): void {
    this.fenceCheck.start(this.deps.options.fenceCheckMs)
  }

  /**
   * Admits a freshly upgraded socket (not while shutting down, not past the awaiting limits or
   * the capacity) and gives it a session. `address` is the client's: the socket's peer, or what
   * a trusted balancer forwarded (TRUST_PROXY); it defaults to the peer.
   */
  accept(socket: WebSocket, wire: Socket, address: string = wire.remoteAddress ?? ''): void {
    const { registry, options, metrics } = this.deps
    const refuse = (reason: string, code: CloseCode, text: string) => {
      metrics.refusals.inc({ reason })
      refuseAtOnce(socket, wire, code, text)
    }
    if (this.closing) return refuse('restarting', CLOSE_CODES.restarting, 'server restarting')
    if (this.awaiting.size >= options.maxAwaitingRegister) return refuse('awaiting', CLOSE_CODES.try_again, 'too many links awaiting registration; try again later')
    const fromAddress = this.awaitingByAddress.get(address) ?? 0
    if (fromAddress >= options.maxAwaitingPerAddress) return refuse('awaiting_address', CLOSE_CODES.try_again, 'too many links from this address awaiting registration; try again later')
    if (registry.size + this.awaiting.size >= options.maxLinks) return refuse('capacity', CLOSE_CODES.try_again, 'this instance holds all the links it can; try again later')
    this.awaitingByAddress.set(address, fromAddress + 1)
    this.awaiting.set(new LinkSession(socket, wire, this.sessionHost), address)
  }

  private stopAwaiting(session: LinkSession): void {
    const address = this.awaiting.get(session)
    if (address === undefined || !this.awaiting.delete(session)) return
    const left = (this.awaitingByAddress.get(address) ?? 1) - 1
    if (left > 0) this.awaitingByAddress.set(address, left)
    else this.awaitingByAddress.delete(address)
  }

  /**
   * Stops accepting links, lets in-flight requests finish (bounded), closes every link with
   * 1012 and writes what is pending.
   */
  async shutdown(): Promise<void> {
    const { registry, writer, options } = this.deps
    this.closing = true
    await this.deps.beforeLinksClose?.().catch((err: unknown) => this.deps.log.warn({ err }, 'stopping what sends on links failed'))
    // Not awaited: a check blocked on an unreachable database must not hold up the shutdown.
    void this.fenceCheck.stop()
    registry.stopPinging()
    const deadline = Date.now() + options.shutdownGraceMs
    while (registry.inFlight() > 0 && Date.now() < deadline) await delay(25)
    const sessions = [...this.awaiting.keys()]
    for (const session of sessions) session.close(CLOSE_CODES.restarting, 'server restarting')
    const links = registry.all()
    for (const link of links) link.close(CLOSE_CODES.restarting, 'server restarting')
    await Promise.all([...sessions.map((s) => closed(s.socket)), ...links.map((l) => closed(l.socket))])
    await writer.drain()
    writer.stop()
  }

  /**
   * Registration under a fencing generation (see docs/deploy.md, "One link per device"):
   * admit the key → claim (atomic generation bump in the database) → announce the claim on the
   * bus (after which later claims reach us) → re-read the generation → join the registry unless
   * a higher generation was seen. A higher claim seen at any step refuses this link with 4409;
   * a claim that cannot be decided refuses it with 1011 (database) or 1013 (bus), unregistered.
   * Resolves only after this instance stopped answering for the device, and the session closes
   * a refused socket only then, so a client that saw the close never reaches a stale holder.
   */
  private async register(socket: WebSocket, wire: Socket, frame: RegisterFrame, remoteAddress: string): Promise<Registration | undefined> {
    const deviceId = frame.device_id
    this.registering.begin(deviceId)
    const step: { stage: 'database' | 'bus'; link?: DeviceLink } = { stage: 'database' }
    try {
      const refusal = await this.admit(frame)
      if (refusal) return refusal
      if (!isOpen(socket)) return undefined
      const claimed = await this.claim(socket, wire, frame, remoteAddress)
      if (!('link' in claimed)) return claimed.refusal
      step.link = claimed.link
      return (await this.confirmNewest(claimed.link, step)) ?? this.join(claimed.link, frame)
    } catch (err) {
      // Undecided: the link is not registered. 1013 (try again later) when the bus could not
      // carry the claim, 1011 when the database could not record or confirm it.
      this.deps.log.error({ err, deviceId, stage: step.stage }, 'device registration failed: ownership could not be decided')
      if (step.link) await this.deps.store.linksClosed([step.link]).catch(() => undefined)
      return step.stage === 'bus'
        ? refused(CLOSE_CODES.try_again, 'ownership could not be announced; try again later')
        : refused(CLOSE_CODES.internal, 'registration failed')
    } finally {
      this.registering.end(deviceId)
      await this.releaseIfUnused(deviceId)
    }
  }

  /** Step 1: the key (and enroll token) of the register frame; a refusal, or undefined when admitted. */
  private async admit(frame: RegisterFrame): Promise<Registration | undefined> {
    const verdict = await this.admissions.call(frame)
    if (verdict === 'accepted') return undefined
    this.deps.log.warn({ deviceId: frame.device_id, verdict }, 'device link refused')
    return refused(CLOSE_CODES.unauthorized, verdict === 'wrong_key' ? 'wrong key for this device id' : 'enroll token required')
  }

  /**
   * Step 2: the claim, an atomic generation bump in the database. It is written within
   * claimTimeoutMs or not at all (a statement time-out there); the wait here allows a little
   * more, so this side never gives up on a claim that is still able to commit.
   */
  private async claim(socket: WebSocket, wire: Socket, frame: RegisterFrame, remoteAddress: string): Promise<{ link: DeviceLink } | { refusal: Registration }> {
    const deviceId = frame.device_id
    const identity = { linkId: randomUUID(), deviceId, hostname: frame.hostname, ip: frame.ip ?? displayAddress(remoteAddress), version: frame.version, ratedCph: frame.rated_cph }
    const connectTime = nowSeconds()
    const { claimTimeoutMs } = this.deps.options
    const generation = await withTimeout(this.claims.call({ identity, connectTime }, performance.now() + claimTimeoutMs), claimTimeoutMs + CLAIM_COMMIT_GRACE_MS)
    if (generation === undefined) return { refusal: refused(CLOSE_CODES.internal, 'device record removed during registration; link again') }
    this.registering.saw(deviceId, generation)
    return { link: new DeviceLink(identity, generation, socket, this.deps.metrics, wire, connectTime) }
  }

  /**
   * Step 3: announce the claim on the bus (later claims reach us from then on), read back who
   * holds the device where other instances may have claimed it since, and give way to any newer
   * generation seen. A refusal, or undefined when this link is the newest and may join.
   */
  private async confirmNewest(link: DeviceLink, step: { stage: 'database' | 'bus' }): Promise<Registration | undefined> {
    const { store, bus, registry, log } = this.deps
    const { deviceId, generation } = link
    step.stage = 'bus'
    await bus.claim(deviceId, generation)
    step.stage = 'database'
    if (bus.sharedWithOtherInstances) {
      this.registering.saw(deviceId, await withTimeout(this.readBacks.call(deviceId), this.deps.options.claimTimeoutMs))
    }
    if (this.registering.passed(deviceId, generation) || (registry.get(deviceId)?.generation ?? 0) > generation) {
      log.info({ deviceId, generation }, 'device link superseded by a newer connection while registering')
      await store.linksClosed([link])
      return refused(CLOSE_CODES.replaced, REPLACED)
    }
    if (!isOpen(link.socket) || this.closing) {
      await store.linksClosed([link])
      return refused(CLOSE_CODES.restarting, 'server restarting')
    }
    return undefined
  }

  /** Step 4: the link joins the registry (closing the one it replaces here) and the device hears `registered`. */
  private join(link: DeviceLink, frame: RegisterFrame): Registration {
    const { registry, log } = this.deps
    const replaced = registry.add(link)
    replaced?.close(CLOSE_CODES.replaced, REPLACED)
    link.socket.send(JSON.stringify({ type: 'registered', device_id: link.deviceId, server_time: nowSeconds() }))
    this.deps.events?.registered(link, replaced !== undefined)
    log.info({ deviceId: link.deviceId, ip: link.identity.ip, version: frame.version, generation: link.generation }, 'device linked')
    return { ok: true, link }
  }

  /**
   * A claim of `generation` was made for the device (announced on the bus, or read from the
   * database): a link of a lower generation here is closed with 4409 at once.
   */
  async fence(deviceId: string, generation: number): Promise<void> {
    this.registering.saw(deviceId, generation)
    const link = this.deps.registry.get(deviceId)
    if (!link || link.generation >= generation) return
    this.deps.log.info({ deviceId, generation: link.generation, newer: generation }, 'device link taken over by a newer connection')
    link.markClosed()
    this.deps.registry.remove(link)
    await this.releaseIfUnused(deviceId)
    link.close(CLOSE_CODES.replaced, REPLACED)
    this.unlink(link)
  }

  /**
   * Backstop for a lost announcement: every link here whose generation was passed in the
   * database closes. Only the claims made since the previous pass (less an overlap) are read,
   * so an idle fleet costs one indexed query that finds nothing; a link registered here was
   * claimed after this server started, and so was any claim that passed it. Claims whose device
   * still names this instance as its holder are left out: the registration that made such a
   * claim here replaces the older link here itself.
   */
  async checkFences(): Promise<void> {
    const started = performance.now()
    const overlap = this.deps.options.claimTimeoutMs / 1000 + FENCE_CHECK_COMMIT_MARGIN_S
    const claimed = await this.deps.store.claimedWithin((started - this.fencesCheckedAt) / 1000 + overlap, this.deps.bus.instanceId)
    this.fencesCheckedAt = started
    for (const [deviceId, generation] of claimed) {
      const link = this.deps.registry.get(deviceId)
      if (link && generation > link.generation) await this.fence(deviceId, generation)
    }
  }

  private unlink(link: DeviceLink): void {
    const { registry, writer, log } = this.deps
    // The socket's close and a takeover both end here: the link's own state says who was first.
    if (!link.markUnlinked()) return
    if (registry.remove(link)) {
      void this.releaseIfUnused(link.deviceId)
      this.deps.events?.closed(link)
      this.deps.production?.closed(link)
    }
    void writer.closed(link)
    log.info({ deviceId: link.deviceId }, 'device link closed')
  }

  /** The bus stops holding an id once no link of it is open here and none is registering. */
  private async releaseIfUnused(deviceId: string): Promise<void> {
    if (!this.deps.registry.get(deviceId) && !this.registering.has(deviceId)) await this.deps.bus.release(deviceId).catch(() => undefined)
  }
}

/**
 * Closes a socket that gets no session. Until the peer's close frame arrives ws reads on, so
 * the limit of an unregistered socket applies: past it, the connection is cut off; so is a peer
 * that has not answered the close within a second.
 */
function refuseAtOnce(socket: WebSocket, wire: Socket, code: CloseCode, reason: string): void {
  socket.close(code, reason)
  new FrameByteLimit(socket, wire, MAX_UNREGISTERED_FRAME_BYTES, () => cutOffAfterClose(socket, wire))
  // ws waits 30 s for the peer's close frame; refused at capacity, a socket must give back its descriptor sooner.
  const cutOff = setTimeout(() => socket.terminate(), CLOSE_WAIT_MS)
  socket.once('close', () => clearTimeout(cutOff))
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

const refused = (code: CloseCode, reason: string): Registration => ({ ok: false, refusal: { code, reason } })


const displayAddress = (address: string) => (address.startsWith('::ffff:') ? address.slice(7) : address)
