import multipart from '@fastify/multipart'
import type { FastifyPluginAsync } from 'fastify'
import type { AppDeps } from '../../app-deps.js'
import { downloadRoutes } from './download-routes.js'
import { releaseAdminRoutes } from './release-admin-routes.js'
import { uploadRoute } from './upload-route.js'

/** Firmware releases: upload, activate, list, public manifest and image (contract §6). */
export const firmwarePlugin: FastifyPluginAsync<{ deps: AppDeps }> = async (app, { deps }) => {
  const max = deps.config.firmwareMaxBytes
  // Multipart is parsed only here; everywhere else a multipart body is 415.
  await app.register(multipart, { limits: { fileSize: max, files: 2, fields: 4, parts: 6, fieldSize: 1024 * 1024 } })
  await app.register(uploadRoute, { deps })
  await app.register(releaseAdminRoutes, { deps })
  await app.register(downloadRoutes, { deps })
}
