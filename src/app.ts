import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import rateLimit from '@fastify/rate-limit'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyServerOptions } from 'fastify'
import type { AppDeps } from './app-deps.js'
import { authRoutes } from './auth/auth-routes.js'
import { Authenticator } from './auth/authenticator.js'
import { LoginThrottle } from './auth/login-throttle.js'
import { TokenService } from './auth/token-service.js'
import { MAX_QUEUED_HASHES, passwordHashGate, UserDirectory, type PasswordVerifier } from './auth/user-directory.js'
import { verifyPassword } from './auth/password-hash.js'
import { SessionRevocations, type SessionRevocationOptions } from './auth/session-revocations.js'
import type { Config } from './config/config.js'
import { consoleRoutes } from './console/console-routes.js'
import { createEventBus } from './events/create-event-bus.js'
import type { EventBus } from './events/event-bus.js'
import { EVENT_DEFAULTS, type EventOptions } from './events/event-options.js'
import { eventsPlugin } from './events/events-plugin.js'
import { EVENT_DATA_SCHEMAS, isFleetEvent, type FleetEvent } from './fleet-event.js'
import { BindingRepository } from './gateway/devices/binding-repository.js'
import { firmwarePlugin } from './gateway/releases/firmware-plugin.js'
import { gatewayPlugin } from './gateway/gateway-plugin.js'
import type { RolloutOptions } from './gateway/rollouts/create-rollouts.js'
import type { InstancePresenceOptions } from './gateway/devices/instance-presence.js'
import { requireConsole } from './platform/admin/console-auth.js'
import { ConsoleTokenGuard } from './platform/admin/console-token-guard.js'
import { DownloadTally } from './gateway/releases/download-tally.js'
import { RevokedReleases } from './firmware/revoked-releases.js'
import { generatedConsoleToken } from './platform/admin/console-token.js'
import { pruneProduction } from './gateway/production/ingest/production-retention.js'
import { platformPlugin } from './platform/platform-plugin.js'
import { AppError, errorBody } from './errors.js'
import { AccessLogController } from './http/access-log.js'
import { installErrorHandler } from './http/error-handler.js'
import { installGracefulClose, type GracefulCloseOptions } from './http/graceful-close.js'
import { installJsonBodyParser } from './http/json-body-parser.js'
import { installRequestMetrics } from './http/request-metrics.js'
import { createMetrics } from './metrics/metrics.js'
import { natsSettings } from './nats/connect-nats.js'
import { installOpenApi } from './http/openapi.js'
import { installPrefixGuards } from './http/prefix-guards.js'
import { privateOpsGuards } from './http/private-ops.js'
import { lazyRequestLogger, requestIdGenerator } from './http/request-logging.js'
import { installUnreadBodyHandling } from './http/unread-bodies.js'
import { opsRoutes } from './http/ops-routes.js'
import { installValidator } from './http/validator.js'
import type { DeviceLinkOptions } from './link/link-options.js'
import { getOrCreateSetting } from './storage/settings-repository.js'
import type { Storage } from './storage/storage.js'

export const JSON_BODY_LIMIT = 1024 * 1024

/** How long an idle keep-alive connection is kept (see the Fastify options below). */
const KEEP_ALIVE_TIMEOUT_MS = 5000

export interface BuildOptions {
  /** Opened and migrated storage; the app closes it when it closes. */
  storage: Storage
  logger?: FastifyServerOptions['logger']
  /** A ready logger (see `serverLogger`); wins over `logger`. */
  loggerInstance?: FastifyBaseLogger
  /** Time-out of the mini-program identity service (contract: 5 s). */
  wechatTimeoutMs?: number
  /** Device-link timings (register time-out, pings); only tests change them. */
  deviceLink?: DeviceLinkOptions
  /** Rollout pass interval; only tests change it. */
  rollouts?: RolloutOptions
  /** Instance liveness timings; only tests change them. */
  presence?: InstancePresenceOptions
  /** How a closing server treats idle keep-alive connections (`serve` leaves them to their clients a while), and its drain (/readyz answers "draining" meanwhile). */
  gracefulClose?: GracefulCloseOptions
  /** Built console folder (default: dist/console of the package). */
  consoleDir?: string
  /** Event-stream timings and limits (keep-alive, sweeps); only tests change them. */
  events?: EventOptions
  /** The event bus to use instead of the configured one (tests publish on it directly). */
  eventBus?: EventBus<FleetEvent>
  /** Login internals tests change: the password-hash gate's bounds, the password check, the token clock. */
  login?: LoginOptions
  /** How long a session found live is taken as live, and the clock of it (SessionRevocations); tests change them. */
  sessions?: Pick<SessionRevocationOptions, 'liveForMs' | 'now'>
  /** How often firmware download counts are written (default DOWNLOAD_FLUSH_MS); tests shorten it. */
  downloadFlushMs?: number
}

export interface LoginOptions {
  /** Hashes at once (default: LOGIN_HASH_CONCURRENCY). */
  hashConcurrency?: number
  /** Hashes waiting (default 64). */
  maxQueuedHashes?: number
  verify?: PasswordVerifier
  /** Epoch milliseconds, for tokens (signing, expiry, session age). */
  now?: () => number
}

/** Builds the whole server as a Fastify instance. Never listens: `server.ts` does. */
export async function buildApp(config: Config, options: BuildOptions): Promise<FastifyInstance> {
  const app = Fastify({
    ...(options.loggerInstance ? { loggerInstance: options.loggerInstance } : { logger: options.logger ?? false }),
    logController: new AccessLogController(),
    bodyLimit: JSON_BODY_LIMIT,
    genReqId: requestIdGenerator(),
    childLoggerFactory: lazyRequestLogger,
    requestIdHeader: false,
    forceCloseConnections: 'idle',
    // Node's own default (Fastify's is 72 s): clients close idle connections first, as they are
    // told (`Keep-Alive: timeout=5`), and the proxy's must be shorter (nginx: 4 s, deploy/nginx).
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    // Requests arriving while the server closes are served, not refused with Fastify's own 503
    // (see installGracefulClose).
    return503OnClosing: false,
    // Rate limits count by client address: behind trusted balancers, the one they forward.
    trustProxy: config.trustProxy ? [...config.trustProxy] : false,
    routerOptions: { maxParamLength: 512 },
    // Errors Fastify raises before routing (bad percent-encoding, bad content type) get our body too.
    frameworkErrors: (error, request, reply) => {
      const status = error.statusCode ?? 400
      reply.header('x-request-id', request.id)
      void (reply as FastifyReply).code(status).send(errorBody(status === 415 ? 'unsupported_media_type' : 'bad_request', error.message))
    },
  }).withTypeProvider<TypeBoxTypeProvider>()

  const { storage } = options
  const deps = await createDeps(config, storage, app, options)

  app.decorateRequest('user', null)
  app.decorateRequest('tokenClaims', null)
  app.decorateRequest('sessionCheck', null)
  app.decorateRequest('consoleAuthenticated', false)
  // Before any handler: a session ended by logout (on any instance) is refused (see Authenticator.userHook).
  app.addHook('preHandler', deps.authenticator.sessionHook)
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id)
    done()
  })
  // X-Console-Token, wherever it is accepted: compared once, wrong ones limited per address (before any route's guard).
  app.addHook('onRequest', new ConsoleTokenGuard(storage, deps.consoleToken).hook)
  installGracefulClose(app, options.gracefulClose)
  installValidator(app)
  installJsonBodyParser(app)
  installErrorHandler(app)
  installUnreadBodyHandling(app)
  installPrefixGuards(app, [
    { prefix: '/api/v1/admin/', check: deps.authenticator.requireAdmin },
    { prefix: '/api/admin/', check: requireConsole(deps) },
    ...(config.opsEndpoints === 'private' ? privateOpsGuards() : []),
  ])
  installRequestMetrics(app, deps.metrics)
  await installOpenApi(app, { schemas: EVENT_DATA_SCHEMAS })
  await app.register(rateLimit, {
    global: false,
    errorResponseBuilder: (_request, context) =>
      new AppError('rate_limited', `Too many requests; retry in ${Math.ceil(context.ttl / 1000)} s`),
  })

  // Root-level onClose runs after every capability's own onClose: storage closes last.
  app.addHook('onClose', async () => {
    deps.sessions.close()
    await deps.events.close()
    await deps.downloads.flush()
    await storage.close()
  })
  await app.register(opsRoutes, { metrics: deps.metrics, readiness: deps.readiness, instanceId: deps.instanceId, drain: options.gracefulClose?.drain })
  await app.register(authRoutes, { prefix: '/api/v1/auth', deps })
  await app.register(gatewayPlugin, { deps, link: options.deviceLink, rollouts: options.rollouts, presence: options.presence })
  await app.register(firmwarePlugin, { deps })
  await app.register(platformPlugin, { deps })
  const bindings = new BindingRepository(storage.db)
  await app.register(eventsPlugin, {
    bus: deps.events,
    options: deps.eventOptions,
    registry: deps.metrics.registry,
    userHook: deps.authenticator.userHook,
    sessions: deps.sessions,
    boundDevices: (username) => bindings.boundDeviceIds(username),
  })
  await app.register(consoleRoutes, { dir: options.consoleDir })
  return app
}

async function createDeps(config: Config, storage: Storage, app: FastifyInstance, options: BuildOptions): Promise<AppDeps> {
  const secret = config.jwtSecret ?? (await getOrCreateSetting(storage.db, 'jwt_secret', () => randomBytes(48).toString('base64url'))).value
  const consoleToken = config.platformConsoleToken ?? (await generatedConsoleToken(storage.db, config.dataDir, app.log))
  const metrics = createMetrics()
  const login = options.login ?? {}
  const hashGate = passwordHashGate(login.hashConcurrency ?? config.loginHashConcurrency, login.maxQueuedHashes ?? MAX_QUEUED_HASHES)
  const users = new UserDirectory(config.authUsers, storage.db, login.verify ?? verifyPassword, hashGate)
  const tokens = new TokenService(secret, config.jwtExpireHours, { maxSessionHours: config.jwtMaxSessionHours, ...(login.now ? { now: login.now } : {}) })
  const events =
    options.eventBus ??
    (await createEventBus(natsSettings(config), app.log, isFleetEvent, metrics.registry, { periodMs: options.events?.interestPeriodMs ?? EVENT_DEFAULTS.interestPeriodMs }))
  // Logouts are announced to every instance on the bus: no instance reads the database for a session it found live a moment ago.
  const sessions = new SessionRevocations(storage.db, storage.clock, { ...options.sessions, channel: events.broadcast('sessions') })
  await events.listening()
  return {
    config,
    instanceId: config.instanceId ?? generatedInstanceId(),
    storage,
    users,
    tokens,
    sessions,
    loginGate: hashGate,
    authenticator: new Authenticator(tokens, users, sessions),
    loginThrottle: new LoginThrottle(storage, 'login'),
    metrics,
    consoleToken,
    wechatTimeoutMs: options.wechatTimeoutMs ?? 5000,
    log: app.log,
    readiness: [{ name: 'database', check: () => storage.ping() }],
    events,
    eventOptions: { ...EVENT_DEFAULTS, ...options.events },
    downloads: new DownloadTally(storage.db, app.log, options.downloadFlushMs),
    revokedReleases: await RevokedReleases.load(storage.db, config.firmwareRevokedKeys),
    pruneProduction: (now, pacer) => pruneProduction(storage, now, { rawDays: config.productionRetentionDays, pacer }),
  }
}

/** hostname-pid-random: unique per process, readable in logs; fits the 64-character id rule. */
export function generatedInstanceId(): string {
  const host = hostname().replace(/[^A-Za-z0-9._:-]/g, '-').slice(0, 40) || 'host'
  return `${host}-${process.pid}-${randomBytes(3).toString('hex')}`
}
