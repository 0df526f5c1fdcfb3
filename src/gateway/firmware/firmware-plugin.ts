import type { FastifyPluginAsync } from 'fastify'
import type { AppDeps } from '../../app-deps.js'

/** Firmware releases: upload, activate, list, public manifest and image. */
export const firmwarePlugin: FastifyPluginAsync<{ deps: AppDeps }> = async () => {}
