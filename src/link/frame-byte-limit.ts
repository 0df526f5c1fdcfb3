import type { Socket } from 'node:net'
import type { RawData, WebSocket } from 'ws'

/**
 * Room for frame headers beyond the payload limit: a client frame's header takes at most 14 bytes
 * (RFC 6455 §5.2: 2, a 64-bit length, a 4-byte mask), and a message sent in fragments has one
 * per fragment, of which only one is accounted for.
 */
export const FRAME_HEADER_ALLOWANCE = 1024

/** The bytes a masked (client) frame of `payload` bytes takes on the wire. */
export function clientFrameBytes(payload: number): number {
  return payload + 2 + 4 + (payload < 126 ? 0 : payload < 65_536 ? 2 : 8)
}

/**
 * Bounds what `ws` buffers of a frame it is still assembling on one connection, with public
 * APIs only: it counts the bytes the connection's socket delivers ('data', which ws reads the
 * same way) and takes off every frame ws completes ('message', 'ping', 'pong'). What is left
 * is the incomplete frame ws holds. Once that passes `maxFrameBytes` plus `FRAME_HEADER_ALLOWANCE`, before the
 * rest of the frame is read, `exceeded` is called (once) and counting stops. `stop()` removes
 * every listener, so the limit costs nothing once lifted.
 *
 * ws completes frames synchronously as a chunk arrives (its server default
 * `allowSynchronousEvents`), so a check made after the chunk's 'data' listeners have all run
 * is exact, whichever listener ran first.
 */
export class FrameByteLimit {
  /** Bytes delivered to ws that no completed frame accounts for yet. */
  private incomplete = 0
  private checkQueued = false
  private active = true

  constructor(
    private readonly socket: WebSocket,
    private readonly wire: Socket,
    private readonly maxFrameBytes: number,
    private readonly exceeded: () => void,
  ) {
    wire.on('data', this.onData)
    socket.on('message', this.onMessage)
    socket.on('ping', this.onControlFrame)
    socket.on('pong', this.onControlFrame)
  }

  /** Lifts the limit. */
  stop(): void {
    if (!this.active) return
    this.active = false
    this.wire.removeListener('data', this.onData)
    this.socket.removeListener('message', this.onMessage)
    this.socket.removeListener('ping', this.onControlFrame)
    this.socket.removeListener('pong', this.onControlFrame)
  }

  private readonly onData = (chunk: Buffer): void => {
    this.incomplete += chunk.length
    if (this.checkQueued) return
    this.checkQueued = true
    queueMicrotask(this.check)
  }

  private readonly onMessage = (data: RawData): void => {
    this.incomplete -= clientFrameBytes(rawLength(data))
  }

  private readonly onControlFrame = (data: Buffer): void => {
    this.incomplete -= clientFrameBytes(data.length)
  }

  private readonly check = (): void => {
    this.checkQueued = false
    if (!this.active || this.incomplete <= this.maxFrameBytes + FRAME_HEADER_ALLOWANCE) return
    this.stop()
    this.exceeded()
  }
}

/** How long a connection cut off after its close frame stays open, unread, for the close frame to reach the peer. */
const CUT_OFF_LINGER_MS = 1000

/**
 * Ends a connection whose close frame was sent without reading more of it: ws would read on
 * for the peer's close frame, buffering whatever frame the peer is sending. The connection ends
 * after the close frame and is destroyed a moment later (destroyed at once with unread bytes, it
 * would be reset and the peer could lose the close frame).
 */
export function cutOffAfterClose(socket: WebSocket, wire: Socket): void {
  socket.pause()
  wire.end()
  setTimeout(() => wire.destroy(), CUT_OFF_LINGER_MS).unref()
}

export function rawLength(data: RawData): number {
  if (Array.isArray(data)) return data.reduce((n, part) => n + part.length, 0)
  return Buffer.isBuffer(data) ? data.length : data.byteLength
}
