import type { FastifyBaseLogger } from 'fastify'
import type { Authenticator } from './auth/authenticator.js'
import type { LoginThrottle } from './auth/login-throttle.js'
import type { ConcurrencyGate } from './lib/concurrency-gate.js'
import type { DownloadTally } from './gateway/releases/download-tally.js'
import type { RevokedReleases } from './firmware/revoked-releases.js'
import type { ProductionPruner } from './gateway/production/ingest/production-retention.js'
import type { SessionRevocations } from './auth/session-revocations.js'
import type { TokenService } from './auth/token-service.js'
import type { UserDirectory } from './auth/user-directory.js'
import type { Config } from './config/config.js'
import type { EventBus } from './events/event-bus.js'
import type { EventOptions } from './events/event-options.js'
import type { FleetEvent } from './fleet-event.js'
import type { Metrics } from './metrics/metrics.js'
import type { ReadinessCheck } from './http/ops-routes.js'
import type { Storage } from './storage/storage.js'

/** What every capability gets: built once in `buildApp`, passed to each capability's plugin. */
export interface AppDeps {
  config: Config
  /** This instance's id (INSTANCE_ID, or hostname-pid-random): /readyz, link holder, bus. */
  instanceId: string
  storage: Storage
  users: UserDirectory
  tokens: TokenService
  authenticator: Authenticator
  /** Password hashes (LOGIN_HASH_CONCURRENCY at once, 64 waiting, then 503 `server_busy`); the login route reads whether it is full. */
  loginGate: ConcurrencyGate
  /** Sessions ended by logout, shared by every instance through the database. */
  sessions: SessionRevocations
  /** Failed logins per (client address, username); also used for device login. */
  loginThrottle: LoginThrottle
  metrics: Metrics
  /** Value of X-Console-Token for the platform admin API. */
  consoleToken: string
  wechatTimeoutMs: number
  log: FastifyBaseLogger
  /** /readyz checks; a capability that depends on a service (NATS) adds its own. */
  readiness: ReadinessCheck[]
  /** State changes announced to the event streams (contract §11), across instances. */
  events: EventBus<FleetEvent>
  eventOptions: Required<EventOptions>
  /** Firmware downloads, counted in memory and written aggregated (anonymous requests write nothing). */
  downloads: DownloadTally
  /** Stored releases signed by a revoked key (FIRMWARE_REVOKED_KEYS): not offered nor served. */
  revokedReleases: RevokedReleases
  /** Prunes production data past its retention (§16), a batch at a time; the platform's retention job runs it with the rest. */
  pruneProduction: ProductionPruner
}
