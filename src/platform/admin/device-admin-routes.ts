import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { badRequest, conflict } from '../../errors.js'
import { bindStatus } from '../binding/bind-store.js'
import { toCommandRecord } from '../commands/command-record.js'
import { unknownDevice } from '../device-api/device-auth.js'
import { readConfig } from '../device-config/config-store.js'
import { deleteDeviceAndData, findDevice, insertDevice, listDevices, setTokenHash } from '../devices/device-store.js'
import { toDeviceRecord } from '../devices/device-record.js'
import { issueDeviceToken } from '../devices/device-token.js'
import { recordOperation } from '../logs/operation-log.js'
import { ADMIN_SECURITY, ADMIN_TAGS, DeviceIdParams, Success } from '../platform-schemas.js'
import type { PlatformServices } from '../platform-services.js'
import { SeriesAnswer, TELEMETRY_KEY_PATTERN, TelemetryQuery } from '../telemetry/telemetry-schemas.js'
import { AddDeviceAnswer, AddDeviceBody, DeviceDetailAnswer, DeviceListAnswer, DeviceListQuery, TokenAnswer } from './console-schemas.js'
import { actorOf } from './console-auth.js'
import { platformDeviceEvent } from '../devices/platform-device-event.js'

const telemetryKey = new RegExp(TELEMETRY_KEY_PATTERN)

/** Device list, detail, add, delete, token rotation and telemetry query. */
export const deviceAdminRoutes: FastifyPluginAsyncTypebox<{ services: PlatformServices }> = async (app, { services }) => {
  const { db, commands, telemetry } = services
  const schema = { tags: ADMIN_TAGS, security: ADMIN_SECURITY }
  const existing = async (deviceId: string) => {
    const device = await findDevice(db, deviceId)
    if (!device) throw unknownDevice(deviceId)
    return device
  }

  app.get('/api/admin/devices', { schema: { ...schema, querystring: DeviceListQuery, response: { 200: DeviceListAnswer } } }, async (request) => {
    const { rows, next_after } = await listDevices(db, request.query.limit ?? 100, request.query.after)
    const onlineSince = services.onlineSince(Date.now())
    return { success: true, devices: rows.map((r) => toDeviceRecord(r, onlineSince)), ...(next_after ? { next_after } : {}) }
  })

  app.get(
    '/api/admin/device/:device_id/detail',
    { schema: { ...schema, params: DeviceIdParams, response: { 200: DeviceDetailAnswer } } },
    async (request) => {
      const { device_id } = request.params
      const device = await existing(device_id)
      const now = Date.now()
      await commands.sweep(device_id)
      const [config, latest_telemetry, queued, bind] = await Promise.all([
        readConfig(db, device_id),
        telemetry.latest(device_id),
        commands.queued(device_id),
        bindStatus(db, device_id),
      ])
      return { success: true, device: toDeviceRecord(device, services.onlineSince(now)), config, latest_telemetry, pending_commands: queued.map(toCommandRecord), bind }
    },
  )

  app.post(
    '/api/admin/device/add',
    { schema: { ...schema, body: AddDeviceBody, response: { 201: AddDeviceAnswer } } },
    async (request, reply) => {
      const { device_id, model } = request.body
      const { token, hash } = issueDeviceToken()
      const now = Date.now()
      const created = await db.transaction().execute(async (tx) => {
        if (!(await insertDevice(tx, { device_id, model, token_hash: hash }, now))) return undefined
        await recordOperation(tx, { actor: actorOf(request), action: 'device.add', device_id, message: `added device ${device_id} (model ${model})` }, now)
        return findDevice(tx, device_id)
      })
      if (!created) throw conflict(`Device ${device_id} exists already`)
      services.deps.events.publish(platformDeviceEvent(device_id, false, null, 'added', now))
      return reply.status(201).send({ success: true, device: toDeviceRecord(created, services.onlineSince(now)), device_token: token })
    },
  )

  app.post(
    '/api/admin/device/:device_id/delete',
    { schema: { ...schema, params: DeviceIdParams, response: { 200: Success } } },
    async (request) => {
      const { device_id } = request.params
      const deleted = await db.transaction().execute(async (tx) => {
        if (!(await deleteDeviceAndData(tx, device_id))) return false
        await recordOperation(tx, { actor: actorOf(request), action: 'device.delete', device_id, message: `deleted device ${device_id} and its data` })
        return true
      })
      if (!deleted) throw unknownDevice(device_id)
      services.deps.events.publish(platformDeviceEvent(device_id, false, null, 'deleted'))
      return { success: true }
    },
  )

  app.post(
    '/api/admin/device/:device_id/token',
    {
      schema: { ...schema, params: DeviceIdParams, response: { 200: TokenAnswer }, description: 'Issues a new device token (devices created by a heartbeat have none)' },
    },
    async (request) => {
      const { device_id } = request.params
      await existing(device_id)
      const { token, hash } = issueDeviceToken()
      await db.transaction().execute(async (tx) => {
        await setTokenHash(tx, device_id, hash)
        await recordOperation(tx, { actor: actorOf(request), action: 'device.token', device_id, message: `issued a new token for ${device_id}` })
      })
      return { success: true, device_token: token }
    },
  )

  app.get(
    '/api/admin/device/:device_id/telemetry',
    { schema: { ...schema, params: DeviceIdParams, querystring: TelemetryQuery, response: { 200: SeriesAnswer } } },
    async (request) => {
      const { device_id } = request.params
      const { from, to, limit = 100 } = request.query
      if (from !== undefined && to !== undefined && from > to) throw badRequest('from is after to')
      await existing(device_id)
      const keys = request.query.keys === undefined ? await telemetry.keys(device_id) : parseKeys(request.query.keys)
      return { success: true, series: await telemetry.series(device_id, keys, { from, to, limit }) }
    },
  )
}

function parseKeys(text: string): string[] {
  const keys = [...new Set(text.split(',').map((k) => k.trim()))]
  if (keys.length > 64) throw badRequest('At most 64 keys')
  for (const key of keys) if (!telemetryKey.test(key)) throw badRequest(`Invalid telemetry key ${JSON.stringify(key)}`)
  return keys
}
