import { once } from 'node:events'
import type { AddressInfo, Socket } from 'node:net'
import { WebSocketServer, type WebSocket } from 'ws'
import { MAX_FRAME_BYTES } from '@fleetgate/device-agent/protocol'

export interface SocketServer {
  /** ws://127.0.0.1:<port> */
  url: string
  close(): Promise<void>
}

/** A bare ws server on a free port that hands each upgraded socket to `onSocket`, as the device-link route does. */
export async function startSocketServer(onSocket: (socket: WebSocket, wire: Socket) => void): Promise<SocketServer> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', maxPayload: MAX_FRAME_BYTES, perMessageDeflate: false })
  wss.on('connection', (socket, request) => onSocket(socket, request.socket))
  await once(wss, 'listening')
  const { port } = wss.address() as AddressInfo
  return {
    url: `ws://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        for (const client of wss.clients) client.terminate()
        wss.close(() => resolve())
      }),
  }
}
