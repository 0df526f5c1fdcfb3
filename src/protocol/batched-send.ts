import type { Socket } from 'node:net'
import type { WebSocket } from 'ws'

const corked = new WeakSet<Socket>()

/**
 * Sends a text frame; frames sent on one socket during the same turn of the event loop
 * leave in one write. Under load this saves a syscall per frame. `ws` has no public cork,
 * so its underlying socket is reached through `_socket` (it just sends unbatched without one).
 */
export function sendBatched(ws: WebSocket, text: string, done: (err?: Error) => void): void {
  const raw = (ws as unknown as { _socket?: Socket })._socket
  if (raw && !corked.has(raw)) {
    corked.add(raw)
    raw.cork()
    setImmediate(() => {
      corked.delete(raw)
      raw.uncork()
    })
  }
  ws.send(text, done)
}
