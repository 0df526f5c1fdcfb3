import type { FastifyPluginAsync } from 'fastify'
import type { AppDeps } from '../app-deps.js'

/** Gateway: device link, device registry and bindings, forwarding, overview, admin. */
export const gatewayPlugin: FastifyPluginAsync<{ deps: AppDeps }> = async () => {}
