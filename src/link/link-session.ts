import type { Socket } from 'node:net'
import WebSocket, { type RawData } from 'ws'
import { CLOSE_CODES, MAX_STATUS_BYTES, MAX_UNREGISTERED_FRAME_BYTES, parseDeviceFrame, rawDataText, type CloseCode, type DeviceFrame, type FirmwareStatusFrame, type RegisterFrame } from '@fleetgate/device-agent/protocol'
import type { DeviceLink } from './device-link.js'
import { cutOffAfterClose, FrameByteLimit, rawLength } from './frame-byte-limit.js'
import type { LinkObserver } from './link-observer.js'
import type { ProductionReceiver } from './production-receiver.js'
import type { StatusWriter } from './status-writer.js'

/**
 * Where a socket is in the device link (contract §4):
 * - `awaiting_register`: upgraded; the first frame must be `register`, within the time limit.
 * - `registering`: the register frame is being decided; later frames wait, in order.
 * - `registered`: the link is in the registry; frames are dispatched to it.
 * - `closed`: the server closed the socket or the socket closed; frames are ignored.
 * Once registered, the end of the link is the link's own state (`DeviceLink.state`): a session
 * whose link was closed (taken over, ping watch, shutdown) is `closed` from that moment.
 */
export type LinkSessionState = 'awaiting_register' | 'registering' | 'registered' | 'closed'

/** Why a registration was refused: the close the socket gets. */
export interface Refusal {
  code: CloseCode
  reason: string
}

/** The outcome of a registration; undefined when the socket closed before it was decided. */
export type Registration = { ok: true; link: DeviceLink } | { ok: false; refusal: Refusal }

/** What a session needs of the link server. */
export interface LinkSessionHost {
  readonly registerTimeoutMs: number
  readonly writer: Pick<StatusWriter, 'mark'>
  readonly events?: LinkObserver
  /** Takes a device's `firmware-status` report (§14); the rollouts decide what it means. */
  readonly firmwareStatus?: (link: DeviceLink, frame: FirmwareStatusFrame) => void
  /** Takes a device's `production` frames (§16); without one they are refused with 4400. */
  readonly production?: ProductionReceiver
  /** Registers the device under a fencing generation; resolves once the server's bookkeeping is done. */
  register(socket: WebSocket, wire: Socket, frame: RegisterFrame, remoteAddress: string): Promise<Registration | undefined>
  /** The session no longer awaits registration (its registration was decided, or its socket closed). */
  stoppedAwaiting(session: LinkSession): void
  /** The socket closed with `code`. */
  socketClosed(session: LinkSession, code: number): void
  /** Finishes the server's bookkeeping for a closed link (once per link, whoever asks first). */
  unlink(link: DeviceLink): void
}

/** One upgraded socket of the device link, from its register frame until it closes. */
export class LinkSession {
  private current: LinkSessionState = 'awaiting_register'
  /** Set once registered; kept after the close so the link can be unlinked. */
  private link: DeviceLink | undefined
  /** Frames that arrived while registering, handled once registered (created by the first). */
  private queued: string[] | undefined
  /** Until a register frame arrives or the socket closes (an idle link keeps none). */
  private registerTimer: NodeJS.Timeout | undefined
  /**
   * The 64 KiB frame limit before registration, in force as the bytes arrive: ws's own limit
   * (the route's maxPayload) is the registered one, 16 MiB, and ws would buffer that much of one
   * frame before a 'message' could be judged. Lifted (and dropped) once registered.
   */
  private unregisteredLimit: FrameByteLimit | undefined
  /** Set when the limit closed the socket: ws then reports 1006, as it never reads the peer's close frame. */
  private refusedOversize = false
  private readonly remoteAddress: string

  constructor(
    readonly socket: WebSocket,
    private readonly wire: Socket,
    private readonly host: LinkSessionHost,
  ) {
    this.remoteAddress = wire.remoteAddress ?? ''
    this.unregisteredLimit = new FrameByteLimit(socket, wire, MAX_UNREGISTERED_FRAME_BYTES, () => this.refuseOversizeFrame())
    this.registerTimer = setTimeout(() => {
      if (this.current === 'awaiting_register') this.close(CLOSE_CODES.register_timeout, 'no register frame within the time limit')
    }, host.registerTimeoutMs)
    socket.on('message', (data: RawData, isBinary: boolean) => this.onMessage(data, isBinary))
    socket.on('pong', () => this.link?.pong())
    socket.on('close', (code: number) => this.onSocketClosed(code))
    // Errors (oversized frame → 1009, protocol errors) are followed by 'close'; nothing else to do.
    socket.on('error', ignoreError)
  }

  get state(): LinkSessionState {
    return this.current === 'registered' && this.link!.state !== 'open' ? 'closed' : this.current
  }

  /** Closes the socket with `code` (through the link once registered); whatever the device still sends is ignored. */
  close(code: CloseCode, reason: string): void {
    const registered = this.current === 'registered'
    this.enterClosed()
    if (registered) this.link!.close(code, reason)
    else closeSocket(this.socket, code, reason)
  }

  /** A frame over the limit before registration: close with 1009 and read no more of it. */
  private refuseOversizeFrame(): void {
    this.refusedOversize = true
    this.close(CLOSE_CODES.too_big, `frames before registration are limited to ${MAX_UNREGISTERED_FRAME_BYTES} bytes`)
    cutOffAfterClose(this.socket, this.wire)
  }

  private onMessage(data: RawData, isBinary: boolean): void {
    if (this.state === 'closed') return
    if (isBinary) return this.close(CLOSE_CODES.bad_frame, 'binary frames are not accepted; send JSON text')
    if (this.current !== 'registered' && rawLength(data) > MAX_UNREGISTERED_FRAME_BYTES) {
      return this.close(CLOSE_CODES.too_big, `frames before registration are limited to ${MAX_UNREGISTERED_FRAME_BYTES} bytes`)
    }
    const text = rawDataText(data)
    if (this.current === 'registering') {
      // Frames sent right behind the register frame wait for its outcome; the socket stops reading meanwhile.
      this.queued ??= []
      this.queued.push(text)
      this.socket.pause()
      return
    }
    this.handle(text)
  }

  private handle(text: string): void {
    let frame: DeviceFrame
    try {
      frame = parseDeviceFrame(text)
    } catch (err) {
      return this.close(CLOSE_CODES.bad_frame, (err as Error).message)
    }
    if (this.current === 'awaiting_register') {
      if (frame.type !== 'register') return this.close(CLOSE_CODES.bad_frame, 'the first frame must be register')
      return this.startRegistering(frame)
    }
    this.dispatch(frame, this.link!)
  }

  private startRegistering(frame: RegisterFrame): void {
    this.current = 'registering'
    this.stopRegisterTimer()
    void this.host.register(this.socket, this.wire, frame, this.remoteAddress).then((registration) => this.finishRegistering(registration))
  }

  private finishRegistering(registration: Registration | undefined): void {
    this.host.stoppedAwaiting(this)
    if (!registration?.ok) {
      if (registration) this.close(registration.refusal.code, registration.refusal.reason)
      else this.enterClosed()
      // The socket must read again to finish the close handshake.
      this.socket.resume()
      return
    }
    if (this.current === 'closed') return this.host.unlink(registration.link)
    this.link = registration.link
    this.current = 'registered'
    this.liftUnregisteredLimit()
    this.socket.resume()
    const queued = this.queued
    this.queued = undefined
    for (const text of queued ?? []) if (this.state === 'registered') this.handle(text)
  }

  /** A frame on the registered link. */
  private dispatch(frame: DeviceFrame, link: DeviceLink): void {
    switch (frame.type) {
      case 'register':
        return this.close(CLOSE_CODES.bad_frame, 'already registered')
      case 'heartbeat':
        if (Buffer.byteLength(JSON.stringify(frame.status)) > MAX_STATUS_BYTES) {
          return this.close(CLOSE_CODES.bad_frame, `heartbeat status over ${MAX_STATUS_BYTES} bytes of JSON`)
        }
        link.receive(frame)
        this.host.writer.mark(link)
        break
      case 'response':
        link.receive(frame)
        break
      case 'firmware-status':
        link.receive(frame)
        this.host.firmwareStatus?.(link, frame)
        break
      case 'production':
        if (!this.host.production) return this.close(CLOSE_CODES.bad_frame, 'production frames are not taken here')
        link.receive(frame)
        this.host.production.receive(link, frame)
        break
      default:
        // A device frame type without a case here does not compile.
        return frame satisfies never
    }
    this.host.events?.frame(link, frame.type)
  }

  private onSocketClosed(code: number): void {
    this.enterClosed()
    this.liftUnregisteredLimit()
    this.host.socketClosed(this, this.refusedOversize ? CLOSE_CODES.too_big : code)
    if (this.link) this.host.unlink(this.link)
  }

  private enterClosed(): void {
    this.current = 'closed'
    this.stopRegisterTimer()
  }

  private stopRegisterTimer(): void {
    clearTimeout(this.registerTimer)
    this.registerTimer = undefined
  }

  private liftUnregisteredLimit(): void {
    this.unregisteredLimit?.stop()
    this.unregisteredLimit = undefined
  }
}

/** The sessions' one 'error' listener (the route logs the errors). */
const ignoreError = () => undefined

function closeSocket(socket: WebSocket, code: number, reason: string): void {
  if (socket.readyState === WebSocket.CLOSED) return
  try {
    socket.close(code, reason.slice(0, 120))
  } catch {
    socket.terminate()
  }
}
