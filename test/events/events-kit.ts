import type { BuildOptions } from '../../src/app.js'
import type { Env } from '../../src/config/config.js'
import type { EventBus } from '../../src/events/event-bus.js'
import type { EventOptions } from '../../src/events/event-options.js'
import type { FleetEvent } from '../../src/fleet-event.js'
import type { Dialect } from '../../src/storage/storage.js'
import { startGatewayApp, type GatewayApp } from '../gateway/helpers/gateway-app.js'
import type { TestDatabase } from '../helpers/dialects.js'
import { SseClient } from './sse-client.js'

export const CONSOLE = { 'x-console-token': 'test-console-token' }
export const JWT_SECRET = 'events-test-secret-0123456789'

/** Short timings so every time-driven event arrives within a fraction of a second. */
export const FAST_EVENTS: EventOptions = { keepAliveMs: 100, sweepIntervalMs: 50, statusIntervalMs: 200 }

export interface EventsApp extends GatewayApp {
  /** Opens GET /api/v1/events as `username` (a test user), with an optional query. */
  stream(username: string, query?: string): Promise<SseClient>
}

export async function startEventsApp(
  dialect: Dialect,
  env: Env = {},
  options: { database?: TestDatabase; events?: EventOptions; eventBus?: EventBus<FleetEvent>; sessions?: BuildOptions['sessions'] } = {},
): Promise<EventsApp> {
  const app = await startGatewayApp(dialect, { CLOUD_JWT_SECRET: JWT_SECRET, ...env }, { ...options, events: { ...FAST_EVENTS, ...options.events } })
  const open: SseClient[] = []
  return {
    ...app,
    async stream(username, query = '') {
      const client = await SseClient.open(`${app.url}/api/v1/events${query}`, await app.auth(username))
      open.push(client)
      return client
    },
    async close() {
      for (const client of open) client.close()
      await app.close()
    },
  }
}
