import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { DEVICE_SECURITY, DEVICE_TAGS, DeviceIdParams } from '../platform-schemas.js'
import type { PlatformServices } from '../platform-services.js'
import { AckAnswer, AckBody, PollAnswer, PollQuery } from './device-api-schemas.js'

const MAX_POLL = 50

/** GET /v1/device/{id}/commands (poll) and POST …/commands/ack. */
export const commandRoutes: FastifyPluginAsyncTypebox<{ services: PlatformServices }> = async (app, { services }) => {
  const { access, commands } = services
  const schema = { tags: DEVICE_TAGS, security: DEVICE_SECURITY, params: DeviceIdParams }

  app.get(
    '/v1/device/:device_id/commands',
    { schema: { ...schema, querystring: PollQuery, response: { 200: PollAnswer } } },
    async (request) => {
      const { device_id } = request.params
      await access.require(request, device_id)
      const limit = Math.min(request.query.limit ?? 10, MAX_POLL)
      const rows = await commands.poll(device_id, limit)
      return {
        success: true,
        commands: rows.map((r) => ({ id: r.id, action: r.action, params: JSON.parse(r.params) as Record<string, unknown>, created_at: r.created_at, attempt: r.attempts })),
      }
    },
  )

  app.post(
    '/v1/device/:device_id/commands/ack',
    { schema: { ...schema, body: AckBody, response: { 200: AckAnswer } } },
    async (request) => {
      const { device_id } = request.params
      await access.require(request, device_id)
      const acks = 'acks' in request.body ? request.body.acks : [request.body]
      const { acked, duplicates } = await commands.ack(device_id, acks)
      return { success: true, acked, duplicate: duplicates.length > 0, duplicate_ids: duplicates }
    },
  )
}
