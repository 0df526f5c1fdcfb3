import type { FastifyPluginAsync } from 'fastify'
import type { AppDeps } from '../app-deps.js'
import { EventHub } from './event-hub.js'
import { eventsRoute } from './events-route.js'

/**
 * The event stream (contract §11). Streams end in `preClose`, before the server waits for open
 * connections, so SIGTERM still exits promptly.
 */
export const eventsPlugin: FastifyPluginAsync<{ deps: AppDeps }> = async (app, { deps }) => {
  const hub = new EventHub(deps.events, deps.eventOptions, deps.metrics.registry)
  app.addHook('preClose', async () => hub.closeAll())
  await app.register(eventsRoute, { deps, hub })
}
