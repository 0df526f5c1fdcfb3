import { once } from 'node:events'
import type { RawDevice } from '../../gateway/helpers/raw-device.js'

/**
 * Pings the server from the device: resolves with 'pong', or with the close code when the link
 * closed first. A close frame the server sent before the pong arrives before it.
 */
export function roundTrip(device: RawDevice): Promise<'pong' | number> {
  device.socket.ping()
  return Promise.race([once(device.socket, 'pong').then(() => 'pong' as const), device.closed.then(({ code }) => code)])
}
