import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { buildApp, type BuildOptions } from '../../../src/app.js'
import { loadConfig, type Env } from '../../../src/config/config.js'
import { TEST_CLUSTER_ENV } from '../../helpers/nats.js'
import type { EventBus } from '../../../src/events/event-bus.js'
import type { EventOptions } from '../../../src/events/event-options.js'
import type { FleetEvent } from '../../../src/fleet-event.js'
import type { DeviceLinkOptions } from '../../../src/link/link-options.js'
import type { RolloutOptions } from '../../../src/gateway/rollouts/create-rollouts.js'
import type { InstancePresenceOptions } from '../../../src/gateway/devices/instance-presence.js'
import { DEVICE_LINK_PATH } from '@fleetgate/device-agent/protocol'
import { openStorage, type Dialect, type Storage } from '../../../src/storage/storage.js'
import { testDatabase, type TestDatabase } from '../../helpers/dialects.js'
import { loginAs, TEST_AUTH_USERS } from '../../helpers/test-app.js'

export interface GatewayApp {
  app: FastifyInstance
  storage: Storage
  database: TestDatabase
  /** http://127.0.0.1:<port> */
  url: string
  /** ws://127.0.0.1:<port>/api/v1/device-link */
  linkUrl: string
  /** Bearer header of a test user (alice, bob: users; root, admin: administrators). */
  auth(username: string): Promise<string>
  /** Closes the app; drops its database unless it was given one. */
  close(): Promise<void>
}

/** A whole server listening on 127.0.0.1 (real WebSockets need a socket), with test link timings. */
export async function startGatewayApp(
  dialect: Dialect,
  env: Env = {},
  options: { database?: TestDatabase; deviceLink?: DeviceLinkOptions; events?: EventOptions; eventBus?: EventBus<FleetEvent>; rollouts?: RolloutOptions; presence?: InstancePresenceOptions; sessions?: BuildOptions['sessions'] } = {},
): Promise<GatewayApp> {
  const config = loadConfig({ CLOUD_AUTH_USERS: TEST_AUTH_USERS, PLATFORM_CONSOLE_TOKEN: 'test-console-token', ...TEST_CLUSTER_ENV, ...env })
  const database = options.database ?? testDatabase(dialect)
  const storage = await openStorage(database.target)
  await storage.migrate()
  let app: FastifyInstance
  try {
    app = await buildApp({ ...config, database: database.target }, { storage, deviceLink: options.deviceLink, events: options.events, eventBus: options.eventBus, rollouts: options.rollouts, presence: options.presence, ...(options.sessions ? { sessions: options.sessions } : {}) })
    await app.listen({ port: 0, host: '127.0.0.1' })
  } catch (err) {
    await storage.close()
    if (!options.database) await database.cleanup()
    throw err
  }
  const { port } = app.server.address() as AddressInfo
  const tokens = new Map<string, string>()
  let closed = false
  return {
    app,
    storage,
    database,
    url: `http://127.0.0.1:${port}`,
    linkUrl: `ws://127.0.0.1:${port}${DEVICE_LINK_PATH}`,
    async auth(username) {
      if (!tokens.has(username)) tokens.set(username, await loginAs(app, username))
      return tokens.get(username)!
    },
    async close() {
      if (closed) return
      closed = true
      await app.close()
      if (!options.database) await database.cleanup()
    },
  }
}
