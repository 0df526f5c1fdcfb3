import type { Socket } from 'node:net'
import type { WebSocket } from 'ws'

const corked = new WeakSet<Socket>()

/**
 * Sends a text frame; frames sent on one connection during the same turn of the event loop
 * leave in one write. Under load this saves a syscall per frame. `wire` is the connection's
 * socket as `ws` exposes it publicly: the upgrade request's socket on the server side, the
 * `'upgrade'` response's socket on the client side. Without one the frame is sent unbatched.
 */
export function sendBatched(ws: WebSocket, wire: Socket | undefined, text: string, done: (err?: Error) => void): void {
  if (wire && !corked.has(wire)) {
    corked.add(wire)
    wire.cork()
    setImmediate(() => {
      corked.delete(wire)
      wire.uncork()
    })
  }
  ws.send(text, done)
}
