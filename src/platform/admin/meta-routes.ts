import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { describeActions } from '../commands/command-actions.js'
import { EXPRESSIONS } from '../commands/expressions.js'
import { HID_KEYS } from '../commands/hid-keys.js'
import { countDevices } from '../devices/device-store.js'
import { countDeviceErrorsSince } from '../logs/log-store.js'
import { ADMIN_SECURITY, ADMIN_TAGS } from '../platform-schemas.js'
import type { PlatformServices } from '../platform-services.js'
import { MetaAnswer, SummaryAnswer } from './console-schemas.js'

const DAY_MS = 86_400_000

/** GET /api/admin/meta and /api/admin/summary. */
export const metaRoutes: FastifyPluginAsyncTypebox<{ services: PlatformServices }> = async (app, { services }) => {
  const { db, commands, telemetry } = services
  const schema = { tags: ADMIN_TAGS, security: ADMIN_SECURITY }
  const meta = { success: true, expressions: [...EXPRESSIONS], hid_keys: HID_KEYS, actions: describeActions() }

  app.get('/api/admin/meta', { schema: { ...schema, response: { 200: MetaAnswer } } }, async () => meta)

  app.get('/api/admin/summary', { schema: { ...schema, response: { 200: SummaryAnswer } } }, async () => {
    const now = Date.now()
    await commands.sweep()
    const [devices, commandCounts, telemetry_24h, errors_24h] = await Promise.all([
      countDevices(db, services.onlineSince(now)),
      commands.countByStatus(),
      telemetry.countSince(now - DAY_MS),
      countDeviceErrorsSince(db, now - DAY_MS),
    ])
    return {
      success: true,
      devices: { total: devices.total, online: devices.online, offline: devices.total - devices.online },
      commands: commandCounts,
      telemetry_24h,
      errors_24h,
    }
  })
}
