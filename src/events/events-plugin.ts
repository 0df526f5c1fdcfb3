import type { FastifyPluginAsync, onRequestHookHandler } from 'fastify'
import type { Registry } from 'prom-client'
import type { EventBus } from './event-bus.js'
import type { StreamedEvent } from './event-envelope.js'
import { EventHub, type EndedSessions } from './event-hub.js'
import type { EventOptions } from './event-options.js'
import { eventsRoute } from './events-route.js'

export interface EventsPluginOptions {
  /** Where the features publish (contract §11 events of every instance). */
  bus: Pick<EventBus<StreamedEvent>, 'subscribe' | 'listening'>
  options: Required<EventOptions>
  registry: Registry
  /** Authenticates the gateway user (sets `request.user`). */
  userHook: onRequestHookHandler
  /** Sessions ended by logout, here or on another instance: their streams end. */
  sessions: EndedSessions
  /** The devices bound to a (non-admin) user: what their stream shows before any binding event. */
  boundDevices(username: string): Promise<string[]>
}

/**
 * The event stream (contract §11). Streams end in `preClose`, before the server waits for open
 * connections, so SIGTERM still exits promptly.
 */
export const eventsPlugin: FastifyPluginAsync<EventsPluginOptions> = async (app, { bus, options, registry, userHook, sessions, boundDevices }) => {
  const hub = new EventHub(bus, options, registry, sessions)
  hub.start()
  app.addHook('preClose', async () => hub.closeAll())
  await app.register(eventsRoute, { hub, userHook, boundDevices })
}
