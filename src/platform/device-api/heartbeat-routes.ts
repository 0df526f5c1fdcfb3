import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { AppError } from '../../errors.js'
import { findDevice, insertDevice, recordHeartbeat } from '../devices/device-store.js'
import { markOnline } from '../devices/device-liveness.js'
import { platformDeviceEvent } from '../devices/platform-device-event.js'
import { isOnline, toDeviceRecord } from '../devices/device-record.js'
import { DEVICE_SECURITY, DEVICE_TAGS, DeviceIdParams } from '../platform-schemas.js'
import type { PlatformServices } from '../platform-services.js'
import { unknownDevice } from './device-auth.js'
import { DeviceInfoAnswer, HeartbeatAnswer, HeartbeatBody } from './device-api-schemas.js'

/** POST /v1/device/heartbeat and GET /v1/device/{id}. */
export const heartbeatRoutes: FastifyPluginAsyncTypebox<{ services: PlatformServices }> = async (app, { services }) => {
  const { db, access, commands, deps } = services
  const schema = { tags: DEVICE_TAGS, security: DEVICE_SECURITY }

  app.post('/v1/device/heartbeat', { schema: { ...schema, body: HeartbeatBody, response: { 200: HeartbeatAnswer } } }, async (request) => {
    const now = Date.now()
    const { device_id, model, firmware_version, uptime_s, rssi } = request.body
    const ip = request.body.ip ?? request.ip
    const device = await findDevice(db, device_id)
    let event: 'online' | 'added' | undefined
    if (device) {
      access.checkToken(request, device)
      // Online already (the usual heartbeat): no transition to decide, no extra write.
      const wasOffline = !isOnline(device, services.onlineSince(now))
      if (wasOffline && (await markOnline(db, device_id, services.onlineSince(now), now))) event = 'online'
    } else {
      if (!deps.config.platformAutoRegister) throw unknownDevice(device_id)
      // A token exists only after device/add: an unknown device cannot present one.
      if (access.tokenRequired) throw new AppError('unauthorized', `Unknown device ${device_id}: add it first to get its device token`)
      if (await insertDevice(db, { device_id, model: model ?? null, firmware_version: firmware_version ?? null, ip, token_hash: null }, now, now)) event = 'added'
    }
    await recordHeartbeat(db, device_id, { model, firmware_version, ip, uptime_s, rssi }, now)
    if (event) deps.events.publish(platformDeviceEvent(device_id, true, now, event, now))
    return { success: true, server_time: now, pending_commands: await commands.countDue(device_id) }
  })

  app.get('/v1/device/:device_id', { schema: { ...schema, params: DeviceIdParams, response: { 200: DeviceInfoAnswer } } }, async (request) => {
    const device = await access.require(request, request.params.device_id)
    return { success: true, device: toDeviceRecord(device, services.onlineSince(Date.now())) }
  })
}
