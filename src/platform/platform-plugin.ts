import type { FastifyPluginAsync } from 'fastify'
import type { AppDeps } from '../app-deps.js'

/** IoT platform: device API (/v1, /svc) and admin console API (/api/admin). */
export const platformPlugin: FastifyPluginAsync<{ deps: AppDeps }> = async () => {}
