import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { indexedErrors } from '../indexed-errors.js'
import { DEVICE_SECURITY, DEVICE_TAGS, DeviceIdParams } from '../platform-schemas.js'
import type { PlatformServices } from '../platform-services.js'
import { AcceptedAnswer, TelemetryBatch, TelemetryRecord } from '../telemetry/telemetry-schemas.js'
import { recordTime } from '../telemetry/telemetry-window.js'

/** POST /v1/device/{id}/telemetry and /telemetry/batch. */
export const telemetryRoutes: FastifyPluginAsyncTypebox<{ services: PlatformServices }> = async (app, { services }) => {
  const { access, telemetry } = services
  const schema = { tags: DEVICE_TAGS, security: DEVICE_SECURITY, params: DeviceIdParams }

  app.post(
    '/v1/device/:device_id/telemetry',
    { schema: { ...schema, body: TelemetryRecord, response: { 200: AcceptedAnswer } } },
    async (request) => {
      const { device_id } = request.params
      // The device and its token are checked in the write's transaction (see `TelemetryStore.insert`).
      const gate = await access.gate(request, device_id)
      const now = Date.now()
      const ts = recordTime(request.body.ts, now, 0)
      await telemetry.insert(device_id, [{ ts, values: request.body.values }], gate)
      return { success: true, accepted: 1 }
    },
  )

  app.post(
    '/v1/device/:device_id/telemetry/batch',
    {
      schema: { ...schema, body: TelemetryBatch, response: { 200: AcceptedAnswer } },
      // A bare array is the same batch: validate both as `{records}` so errors name the record.
      preValidation: async (request) => {
        if (Array.isArray(request.body)) request.body = { records: request.body }
      },
      schemaErrorFormatter: indexedErrors('/records', 'record'),
    },
    async (request) => {
      const { device_id } = request.params
      const gate = await access.gate(request, device_id)
      const now = Date.now()
      const records = request.body.records.map((r, i) => ({ ts: recordTime(r.ts, now, i), values: r.values }))
      await telemetry.insert(device_id, records, gate)
      return { success: true, accepted: records.length }
    },
  )
}
