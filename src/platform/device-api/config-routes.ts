import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ConfigAnswer, ConfigBody } from '../device-config/config-schemas.js'
import { readConfig, writeConfig } from '../device-config/config-store.js'
import { recordOperation } from '../logs/operation-log.js'
import { DEVICE_SECURITY, DEVICE_TAGS, DeviceIdParams } from '../platform-schemas.js'
import type { PlatformServices } from '../platform-services.js'
import { hasConsoleToken } from './device-auth.js'

/** GET and POST /v1/device/{id}/config: versioned, replaced whole. */
export const configRoutes: FastifyPluginAsyncTypebox<{ services: PlatformServices }> = async (app, { services }) => {
  const { access, db, deps } = services
  const schema = { tags: DEVICE_TAGS, security: DEVICE_SECURITY, params: DeviceIdParams }

  app.get('/v1/device/:device_id/config', { schema: { ...schema, response: { 200: ConfigAnswer } } }, async (request) => {
    const { device_id } = request.params
    await access.require(request, device_id)
    return { success: true, ...(await readConfig(db, device_id)) }
  })

  app.post(
    '/v1/device/:device_id/config',
    { schema: { ...schema, body: ConfigBody, response: { 200: ConfigAnswer } } },
    async (request) => {
      const { device_id } = request.params
      await access.require(request, device_id)
      const { config, version } = request.body
      // The console sets configurations through this call too: that is an admin write.
      const byConsole = hasConsoleToken(request)
      const saved = await db.transaction().execute(async (tx) => {
        const now = Date.now()
        const written = await writeConfig(tx, device_id, config, version, now)
        if (byConsole) {
          const message = `set configuration version ${written.version} of ${device_id}`
          await recordOperation(tx, { actor: 'console', action: 'config.set', device_id, message }, now)
        }
        return written
      })
      return { success: true, ...saved }
    },
  )
}
