import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { decodeJwt } from 'jose'
import type { AppDeps } from '../app-deps.js'
import { CLOCK_SKEW_S } from '../auth/token-service.js'
import { BindingRepository } from '../gateway/devices/binding-repository.js'
import { Id } from '../protocol/ids.js'
import type { EventHub } from './event-hub.js'
import { EVENT_KINDS } from './fleet-event.js'
import { RETRY_MS } from './event-options.js'

const MAX_FILTER_IDS = 100

export const EventsQuery = Type.Object({
  device_id: Type.Optional(
    Type.Array(Id('Only events of this device (repeatable)'), {
      maxItems: MAX_FILTER_IDS,
      description: 'Limits device, device-status, platform-device and command events to these device ids; binding and release events are not filtered',
    }),
  ),
})

const DESCRIPTION = `Server-Sent Events (contract §11). The first line is \`retry: ${RETRY_MS}\`; each event has an \`id:\` increasing within the stream, an \`event:\` name (${EVENT_KINDS.join(', ')}) and a one-line JSON \`data:\`; a \`: keep-alive\` comment comes at least every 15 s. Admins see every event; other users see \`device\` and \`device-status\` of the devices bound to them and their own \`binding\` events. At most 10 open streams per user (429). The stream ends when the token expires. See docs/events.md.`

/** GET /api/v1/events: the live event stream. */
export const eventsRoute: FastifyPluginAsyncTypebox<{ deps: AppDeps; hub: EventHub }> = async (app, { deps, hub }) => {
  const bindings = new BindingRepository(deps.storage.db)

  app.get(
    '/api/v1/events',
    {
      onRequest: deps.authenticator.userHook,
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
        if (user.role !== 'admin') bound = await boundDevices(bindings, user.username)
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

async function boundDevices(bindings: BindingRepository, username: string): Promise<string[]> {
  const ids: string[] = []
  let after: number | undefined
  for (;;) {
    const page = await bindings.page({ limit: 1000, username, after })
    ids.push(...page.rows.map((r) => r.device_id))
    if (!page.more) return ids
    after = page.rows[page.rows.length - 1]!.id
  }
}
