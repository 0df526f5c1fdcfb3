import { Registry } from 'prom-client'
import WebSocket from 'ws'
import { createLinkMetrics } from '../../src/link/link-metrics.js'

/** Link metrics on a registry of their own, for links made outside an app. */
export const detachedLinkMetrics = createLinkMetrics(new Registry(), { linked: () => 0, inFlight: () => 0 })

/** A socket that never connects, for a `DeviceLink` whose identity, frames and heartbeats are all a test reads. */
export function idleSocket(): WebSocket {
  const socket = new WebSocket('ws://127.0.0.1:1')
  socket.on('error', () => undefined)
  socket.terminate()
  return socket
}
