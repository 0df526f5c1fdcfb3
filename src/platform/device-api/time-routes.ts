import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { DEVICE_SECURITY, DEVICE_TAGS, DeviceIdParams } from '../platform-schemas.js'
import type { PlatformServices } from '../platform-services.js'
import { TimeAnswer, TimeSyncAnswer, TimeSyncBody } from './device-api-schemas.js'

/** GET /v1/time and POST /v1/device/{id}/time/sync. */
export const timeRoutes: FastifyPluginAsyncTypebox<{ services: PlatformServices }> = async (app, { services }) => {
  const { access } = services

  app.get('/v1/time', { schema: { tags: DEVICE_TAGS, response: { 200: TimeAnswer } } }, async () => {
    const now = Date.now()
    return { success: true, timestamp: now, iso: new Date(now).toISOString() }
  })

  app.post(
    '/v1/device/:device_id/time/sync',
    { schema: { tags: DEVICE_TAGS, security: DEVICE_SECURITY, params: DeviceIdParams, body: TimeSyncBody, response: { 200: TimeSyncAnswer } } },
    async (request) => {
      const receivedAt = Date.now()
      await access.require(request, request.params.device_id)
      const { device_time } = request.body
      // The device refines this with its own send/receive times: ((t1 − t0) + (t2 − t3)) / 2.
      return { success: true, device_time, server_receive_time: receivedAt, server_send_time: Date.now(), offset_ms: receivedAt - device_time }
    },
  )
}
