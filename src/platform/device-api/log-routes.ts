import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { badRequest } from '../../errors.js'
import { indexedErrors } from '../indexed-errors.js'
import { LogBatchJson, LogBatchText, LogEntry, TEXT_LOG_LIMIT_BYTES } from '../logs/log-schemas.js'
import { insertDeviceLogBatch, type NewLog } from '../logs/log-store.js'
import { parseLogText } from '../logs/log-text-parser.js'
import { DEVICE_SECURITY, DEVICE_TAGS, DeviceIdParams } from '../platform-schemas.js'
import type { PlatformServices } from '../platform-services.js'
import { unknownDevice } from './device-auth.js'
import { AcceptedAnswer } from '../telemetry/telemetry-schemas.js'
import { recordTime } from '../telemetry/telemetry-window.js'

type Options = { services: PlatformServices }
const schema = { tags: DEVICE_TAGS, security: DEVICE_SECURITY, params: DeviceIdParams }

const toRow = (deviceId: string, entry: LogEntry, now: number, index: number): NewLog => ({
  source: 'device',
  device_id: deviceId,
  level: entry.level ?? 'info',
  tag: entry.tag ?? null,
  message: entry.message,
  ts: recordTime(entry.ts, now, index, 'entry'),
})

/** Writes the entries, or 404 when the device was deleted after its check (see `insertDeviceLogBatch`). */
async function store({ db, deps }: PlatformServices, deviceId: string, rows: NewLog[]): Promise<void> {
  if (!(await insertDeviceLogBatch(db, deps.storage.dialect, deviceId, rows))) throw unknownDevice(deviceId)
}

/** POST /v1/device/{id}/logs and /logs/batch (JSON array or text/plain lines). */
export const logRoutes: FastifyPluginAsyncTypebox<Options> = async (app, { services }) => {
  const { access } = services

  app.post('/v1/device/:device_id/logs', { schema: { ...schema, body: LogEntry, response: { 200: AcceptedAnswer } } }, async (request) => {
    const { device_id } = request.params
    await access.require(request, device_id)
    await store(services, device_id, [toRow(device_id, request.body, Date.now(), 0)])
    return { success: true, accepted: 1 }
  })

  await app.register(logBatchRoute, { services })
}

/** Its own context: the text/plain parser exists only here, so text/plain stays 415 everywhere else. */
const logBatchRoute: FastifyPluginAsyncTypebox<Options> = async (app, { services }) => {
  const { access } = services
  app.addContentTypeParser('text/plain', { parseAs: 'string', bodyLimit: TEXT_LOG_LIMIT_BYTES }, (_request, body, done) => done(null, body))

  app.post(
    '/v1/device/:device_id/logs/batch',
    {
      schema: {
        ...schema,
        body: { content: { 'application/json': { schema: LogBatchJson }, 'text/plain': { schema: LogBatchText } } },
        response: { 200: AcceptedAnswer },
      },
      schemaErrorFormatter: indexedErrors('', 'entry'),
    },
    async (request) => {
      const { device_id } = request.params
      await access.require(request, device_id)
      const now = Date.now()
      const body = request.body as LogEntry[] | string | undefined
      if (typeof body !== 'string' && !Array.isArray(body)) throw badRequest('Expected a JSON array of entries or text/plain lines')
      const rows: NewLog[] =
        typeof body === 'string'
          ? parseLogText(body).map((line) => ({ source: 'device', device_id, level: line.level, tag: line.tag ?? null, message: line.message, ts: now }))
          : body.map((entry, i) => toRow(device_id, entry, now, i))
      await store(services, device_id, rows)
      return { success: true, accepted: rows.length }
    },
  )
}
