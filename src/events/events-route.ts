import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { onRequestHookHandler } from 'fastify'
import { decodeJwt } from 'jose'
import { CLOCK_SKEW_S } from '../auth/token-service.js'
import { Id } from '@fleetgate/device-agent/protocol'
import { EVENT_KINDS, eventSchemaName } from './event-envelope.js'
import type { EventHub } from './event-hub.js'
import { RETRY_MS } from './event-options.js'

const MAX_FILTER_IDS = 100

export const EventsQuery = Type.Object({
  device_id: Type.Optional(
    Type.Array(Id('Only events of this device (repeatable)'), {
      maxItems: MAX_FILTER_IDS,
      description: 'Limits device, device-status, machine-state, platform-device and command events to these device ids; binding and release events are not filtered',
    }),
  ),
})

const DESCRIPTION = `Server-Sent Events (contract §11). The first line is \`retry: ${RETRY_MS}\`; each event has an \`id:\` increasing within the stream, an \`event:\` name (${EVENT_KINDS.join(', ')}) and a one-line JSON \`data:\`, described by its schema in \`components.schemas\` (${EVENT_KINDS.map(eventSchemaName).join(', ')}); a \`: keep-alive\` comment comes at least every 15 s. Admins see every event; other users see \`device\`, \`device-status\` and \`machine-state\` of the devices bound to them and their own \`binding\` events. At most 10 open streams per user (429). The stream ends when the token expires. See docs/events.md.`

export interface EventsRouteOptions {
  hub: EventHub
  userHook: onRequestHookHandler
  boundDevices(username: string): Promise<string[]>
}

/** GET /api/v1/events: the live event stream. */
export const eventsRoute: FastifyPluginAsyncTypebox<EventsRouteOptions> = async (app, { hub, userHook, boundDevices }) => {
  app.get(
    '/api/v1/events',
    {
      onRequest: userHook,
      // A HEAD request would hold a stream slot open with nothing to read.
      exposeHeadRoute: false,
      schema: {
        tags: ['events'],
        security: [{ bearer: [] }],
        summary: 'Live event stream (Server-Sent Events)',
        description: DESCRIPTION,
        querystring: EventsQuery,
        response: {
          200: {
            description: 'text/event-stream, kept open',
            content: { 'text/event-stream': { schema: { type: 'string', description: 'retry:, id:, event:, data: lines; `: keep-alive` comments' } } },
          },
        },
      },
    },
    async (request, reply) => {
      const user = request.user!
      const ids = request.query.device_id
      const opened = hub.open(reply.raw, user, ids ? new Set(ids) : undefined, tokenExpiry(request.headers.authorization))
      reply.raw.on('close', () => opened.stream.end('client'))
      let bound: string[] = []
      try {
        if (user.role !== 'admin') bound = await boundDevices(user.username)
        await opened.listening()
      } catch (err) {
        opened.abandon()
        throw err
      }
      reply.hijack()
      const res = reply.raw
      if (opened.stream.isEnded) return
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        // nginx: pass events through as they come.
        'x-accel-buffering': 'no',
        'x-request-id': request.id,
      })
      res.write(`retry: ${RETRY_MS}\n\n`)
      opened.start(bound)
    },
  )
}

/** When the bearer token stops being accepted: its `exp` plus the clock skew verification allows. */
function tokenExpiry(authorization: string | undefined): number {
  const token = authorization?.split(' ')[1] ?? ''
  const { exp } = decodeJwt(token)
  return ((exp ?? 0) + CLOCK_SKEW_S) * 1000
}
