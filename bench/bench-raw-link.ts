import { randomBytes } from 'node:crypto'
import { connect as netConnect, type Socket } from 'node:net'

/**
 * One device link over a bare TCP socket: the upgrade request, masked text frames, and just
 * enough parsing of the server's frames to see `registered`. `ws` as a client spends more CPU
 * per connection than the server does (random key, SHA-1 check, deflate offer, stream objects),
 * so with it this benchmark measured its own device process, not the server.
 */
export class RawLink {
  readonly socket: Socket
  private received: Buffer = Buffer.alloc(0)
  private upgraded = false

  constructor(
    url: URL,
    localAddress: string,
    private readonly onText: (text: string) => void,
  ) {
    this.socket = netConnect({ port: Number(url.port), host: url.hostname, localAddress })
    this.socket.setNoDelay(true)
    this.socket.once('connect', () => {
      this.socket.write(
        `GET ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
      )
    })
    this.socket.on('data', (chunk: Buffer) => this.onData(chunk))
  }

  send(text: string): void {
    this.sendFrame(0x1, Buffer.from(text))
  }

  private sendFrame(opcode: number, payload: Buffer): void {
    // Client frames are masked (RFC 6455 §5.3); a zero mask leaves the payload as it is.
    const first = 0x80 | opcode
    const header = payload.length < 126 ? Buffer.from([first, 0x80 | payload.length, 0, 0, 0, 0]) : Buffer.from([first, 0x80 | 126, payload.length >> 8, payload.length & 0xff, 0, 0, 0, 0])
    this.socket.write(Buffer.concat([header, payload]))
  }

  private onData(chunk: Buffer): void {
    this.received = this.received.length === 0 ? chunk : Buffer.concat([this.received, chunk])
    if (!this.upgraded) {
      const end = this.received.indexOf('\r\n\r\n')
      if (end < 0) return
      if (!this.received.subarray(0, 12).toString('latin1').endsWith('101')) return void this.socket.destroy()
      this.upgraded = true
      this.received = this.received.subarray(end + 4)
      this.socket.emit('upgraded')
    }
    // Server frames are unmasked; only small text frames (and pings) are expected here.
    while (this.received.length >= 2) {
      let length = this.received[1]! & 0x7f
      let offset = 2
      if (length === 126) {
        if (this.received.length < 4) return
        length = this.received.readUInt16BE(2)
        offset = 4
      }
      if (this.received.length < offset + length) return
      const opcode = this.received[0]! & 0x0f
      if (opcode === 0x1) this.onText(this.received.toString('utf8', offset, offset + length))
      // The gateway pings every link and closes one that leaves two pings unanswered.
      if (opcode === 0x9) this.sendFrame(0xa, Buffer.from(this.received.subarray(offset, offset + length)))
      // A close frame is answered with one, and the connection ends (RFC 6455 §5.5.1), as any client does.
      if (opcode === 0x8) {
        this.sendFrame(0x8, Buffer.from(this.received.subarray(offset, offset + Math.min(length, 2))))
        this.socket.end()
        return
      }
      this.received = this.received.subarray(offset + length)
    }
  }
}

/**
 * Loopback source addresses taken in turn: with every connection from one address to one port,
 * the kernel's search for a free ephemeral port grows with the connections already open, and
 * cost the device process more CPU than the server spent registering.
 */
export const sourceAddress = (i: number) => `127.0.${1 + (i >> 8) % 200}.${1 + (i % 250)}`

