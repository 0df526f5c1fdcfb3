import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { SYSTEM_BIN_PATH, findActiveRelease } from '../../firmware/release-repository.js'
import { offersUpdate, parseRunningVersion } from '../ota/upgrade-check.js'
import { DEVICE_SECURITY, DEVICE_TAGS } from '../platform-schemas.js'
import type { PlatformServices } from '../platform-services.js'
import { OtaAnswer, OtaQuery } from './device-api-schemas.js'

/** GET /svc/upgrade/check and its alias /v1/ota/check: is the active firmware release newer? */
export const otaRoutes: FastifyPluginAsyncTypebox<{ services: PlatformServices }> = async (app, { services }) => {
  const { access, db, deps } = services
  const downloadUrl = (request: FastifyRequest) => `${request.protocol}://${request.host}${SYSTEM_BIN_PATH}`

  for (const path of ['/svc/upgrade/check', '/v1/ota/check']) {
    app.get(path, { schema: { tags: DEVICE_TAGS, security: DEVICE_SECURITY, querystring: OtaQuery, response: { 200: OtaAnswer } } }, async (request) => {
      const { device_id, version, hw_version } = request.query
      const running = parseRunningVersion(version)
      await access.require(request, device_id)
      const release = deps.revokedReleases.served(await findActiveRelease(db))
      if (!release || !offersUpdate(release, running, hw_version)) return { success: true, update: false }
      const { release_id, image_version, display_version, size, sha256, crc32 } = release
      return { success: true, update: true, release: { release_id, image_version, display_version, size, sha256, crc32, url: downloadUrl(request) } }
    })
  }
}
