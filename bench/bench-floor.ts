/**
 * The floor of the proxy benchmark: the least a forwarder can do with the same parts (Fastify,
 * `ws`, the same JSON frames, the same batched writes, the same device agent), with no
 * authentication, access check, validation, metrics or logging. Not a product: it shows how
 * much of the forwarded cost the product's own work adds over the parts it stands on.
 */
import type { IncomingMessage } from 'node:http'
import type { Socket } from 'node:net'
import Fastify, { type FastifyInstance } from 'fastify'
import { WebSocketServer, type WebSocket } from 'ws'
import { DEVICE_LINK_PATH, RequestIds, sendBatched } from '@fleetgate/device-agent/protocol'

interface Answer {
  status: number
  data: unknown
}

export async function startFloorForwarder(): Promise<FastifyInstance> {
  const app = Fastify({ logger: false })
  const wss = new WebSocketServer({ noServer: true })
  let link: { ws: WebSocket; wire: Socket } | undefined
  const pending = new Map<string, (answer: Answer) => void>()
  const ids = new RequestIds()
  app.server.on('upgrade', (request: IncomingMessage, socket: Socket, head: Buffer) => {
    if (!request.url?.startsWith(DEVICE_LINK_PATH)) return socket.destroy()
    wss.handleUpgrade(request, socket, head, (ws) => {
      ws.on('message', (data) => {
        const frame = JSON.parse(String(data)) as { type: string; id: string; device_id: string } & Answer
        if (frame.type === 'register') {
          link = { ws, wire: socket }
          ws.send(JSON.stringify({ type: 'registered', device_id: frame.device_id, server_time: Date.now() / 1000 }))
        } else if (frame.type === 'response') {
          const resolve = pending.get(frame.id)
          pending.delete(frame.id)
          resolve?.(frame)
        }
      })
    })
  })
  const user = { id: 'bench', username: 'bench', role: 'user' }
  app.get('/api/v1/devices/:device_id/hardware/position', async (request, reply) => {
    const id = ids.next()
    const answer = await new Promise<Answer>((resolve, reject) => {
      if (!link) return reject(new Error('no device'))
      pending.set(id, resolve)
      sendBatched(link.ws, link.wire, JSON.stringify({ type: 'request', id, method: 'GET', path: '/hardware/position', query: request.query, body: null, user }), () => undefined)
    })
    reply.code(answer.status)
    return { success: answer.status < 400, status: answer.status, data: answer.data }
  })
  app.addHook('onClose', async () => {
    for (const client of wss.clients) client.terminate()
  })
  await app.listen({ port: 0, host: '127.0.0.1' })
  return app
}
