import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { connect, type Socket } from 'node:net'
import { setImmediate as nextTurn } from 'node:timers/promises'

export interface OversizeFrameOutcome {
  /** Payload bytes the connection accepted before the server closed it (or all of them). */
  payloadWritten: number
  /** The code of the close frame the server sent; undefined when none came. */
  closeCode: number | undefined
  /** The server ended or reset the connection before the whole frame was written. */
  cutOff: boolean
}

/**
 * Opens a WebSocket to `url` over a raw TCP connection, sends the text frames `before` (if any),
 * then the header of one text frame
 * announcing `announcedBytes` and streams its payload in small writes, one per turn of the event
 * loop, until the server closes the connection or the whole payload is written. A server that
 * enforces a smaller frame limit only once the frame is complete lets all of it through.
 */
export async function streamOversizeFrame(url: string, announcedBytes: number, { before = [] as string[], writeBytes = 4096 } = {}): Promise<OversizeFrameOutcome> {
  const { hostname, port, pathname } = new URL(url)
  const socket = connect(Number(port), hostname)
  await once(socket, 'connect')
  const received: Buffer[] = []
  let cutOff = false
  socket.on('data', (chunk: Buffer) => received.push(chunk))
  socket.on('error', () => (cutOff = true))
  socket.on('end', () => (cutOff = true))
  socket.on('close', () => (cutOff = true))
  socket.write(
    `GET ${pathname} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
  )
  while (!Buffer.concat(received).includes('\r\n\r\n')) {
    if (cutOff) throw new Error('connection closed during the upgrade')
    await once(socket, 'data')
  }
  const response = Buffer.concat(received)
  if (!response.toString('latin1').startsWith('HTTP/1.1 101')) throw new Error(`upgrade refused: ${response.toString('latin1').split('\r\n')[0]}`)

  for (const text of before) await write(socket, maskedTextFrame(text))
  const header = Buffer.alloc(14)
  header[0] = 0x81 // FIN, text
  header[1] = 0x80 | 127 // masked, 64-bit length
  header.writeBigUInt64BE(BigInt(announcedBytes), 2)
  randomBytes(4).copy(header, 10)
  await write(socket, header)
  const payload = Buffer.alloc(writeBytes, 0x61)
  let payloadWritten = 0
  // Paced writes, one per turn, so the server reads them as they come.
  while (payloadWritten < announcedBytes && !cutOff) {
    const bytes = Math.min(writeBytes, announcedBytes - payloadWritten)
    if (await write(socket, payload.subarray(0, bytes))) payloadWritten += bytes
    else cutOff = true
    await nextTurn()
  }
  if (!socket.destroyed) {
    const closed = once(socket, 'close')
    setTimeout(() => socket.destroy(), 2000).unref()
    await closed
  }
  return { payloadWritten, closeCode: closeCodeAfterUpgrade(Buffer.concat(received)), cutOff }
}

/** A client text frame (masked with a zero mask: the payload travels as is). */
function maskedTextFrame(text: string): Buffer {
  const payload = Buffer.from(text)
  const length = payload.length < 126 ? Buffer.from([payload.length | 0x80]) : Buffer.from([126 | 0x80, payload.length >> 8, payload.length & 0xff])
  if (payload.length >= 65_536) throw new RangeError('frame too long for this helper')
  return Buffer.concat([Buffer.from([0x81]), length, Buffer.alloc(4), payload])
}

function write(socket: Socket, bytes: Buffer): Promise<boolean> {
  return new Promise((resolve) => {
    if (socket.destroyed || !socket.writable) return resolve(false)
    socket.write(bytes, (err) => resolve(!err))
  })
}

/** The code of a close frame right after the upgrade response (server frames are not masked). */
function closeCodeAfterUpgrade(bytes: Buffer): number | undefined {
  const frame = bytes.subarray(bytes.indexOf('\r\n\r\n') + 4)
  if (frame.length < 4 || frame[0] !== 0x88) return undefined
  return frame.readUInt16BE(2)
}
