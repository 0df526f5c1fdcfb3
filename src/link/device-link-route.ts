import type { IncomingMessage, ServerResponse } from 'node:http'
import websocket from '@fastify/websocket'
import type { FastifyPluginAsync } from 'fastify'
import { badRequest } from '../errors.js'
import { DEVICE_LINK_PATH, MAX_FRAME_BYTES } from '@fleetgate/device-agent/protocol'
import type { LinkServer } from './link-server.js'

/** GET /api/v1/device-link: the WebSocket pick-and-place machines keep open (contract §4). */
export const deviceLinkRoute: FastifyPluginAsync<{ server: LinkServer }> = async (app, { server }) => {
  const logSocketError = (error: Error) => app.log.debug({ err: error }, 'device link socket error')
  /** The response the plugin made for each upgrade request, to hand its socket back once upgraded. */
  const responses = new WeakMap<IncomingMessage, ServerResponse>()
  await app.register(websocket, {
    // ws closes the link with 1009 on a larger frame. Synchronous events (ws's default, pinned
    // here) let FrameByteLimit account for every frame completed by a chunk before it checks.
    options: { maxPayload: MAX_FRAME_BYTES, perMessageDeflate: false, clientTracking: false, allowSynchronousEvents: true },
    // Socket errors are followed by a close event, which the link session handles; the default
    // handler would terminate the socket before a 1009 close frame got out.
    errorHandler: (error, _socket, request) => request.log.debug({ err: error }, 'device link socket error'),
    // (Once a link's session starts, `logSocketError` takes over from it: see wsHandler.)
    preClose: async () => {
      await server.shutdown()
      app.websocketServer.close()
    },
  })
  app.route({
    method: 'GET',
    url: DEVICE_LINK_PATH,
    schema: { hide: true },
    handler: async () => {
      throw badRequest('The device link accepts only a WebSocket upgrade (see docs/device-link.md)')
    },
    onRequest: (request, reply, done) => {
      responses.set(request.raw, reply.raw)
      done()
    },
    wsHandler: (socket, request) => {
      // Once upgraded, nothing may keep this request and its reply (with the raw request, the
      // response, headers and logger: a few KB per idle link) for as long as the socket lives:
      // - the response the plugin assigned the socket to (for routing) gives it back;
      // - the plugin's 'error' listener (the errorHandler above) is swapped for one shared by every link.
      const response = responses.get(request.raw)
      if (response?.socket === request.socket) response.detachSocket(request.socket)
      for (const listener of socket.listeners('error')) socket.removeListener('error', listener as (err: Error) => void)
      socket.on('error', logSocketError)
      // request.ip: the peer, or the client a trusted balancer forwards (TRUST_PROXY): the per-address awaiting limit counts by it.
      server.accept(socket, request.socket, request.ip)
    },
  })
}
