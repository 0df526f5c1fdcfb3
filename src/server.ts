import type { FastifyInstance } from 'fastify'
import { buildApp } from './app.js'
import { warnAboutPlainPasswords } from './auth/plain-password-warning.js'
import { ConfigError } from './config/config-error.js'
import { loadConfig, type Config, type Env } from './config/config.js'
import { loadDotEnv } from './config/dot-env.js'
import { serverLogger } from './http/server-logger.js'
import { ShutdownDrain } from './http/shutdown-drain.js'
import { natsSettings, probeNats } from './nats/connect-nats.js'
import { openStorage, type Storage } from './storage/storage.js'

/** After SIGTERM (and the drain) the instance has this long to stop before it exits anyway. */
export const SHUTDOWN_GRACE_MS = 10_000

/** Opens the database named by the configuration, or throws a ConfigError naming DATABASE_URL. */
export async function openConfiguredStorage(config: Config): Promise<Storage> {
  let storage: Storage | undefined
  try {
    storage = await openStorage(config.database)
    await storage.ping()
    await storage.migrate()
    return storage
  } catch (err) {
    await storage?.close().catch(() => {})
    const reason = (err as Error).message || String(err)
    throw new ConfigError('DATABASE_URL', `database unreachable or unusable: ${reason.split('\n')[0]}`)
  }
}

/**
 * Idle keep-alive connections are left to their clients this long at shutdown: nginx closes its
 * own after 2 s (deploy/nginx), other clients theirs after about 3 s (the `Keep-Alive: timeout=5`
 * hint less their margin). Kept short: the link drain and the close follow within §1's 10 s.
 */
const KEEP_ALIVE_DRAIN_MS = 3000

/** `fleetgate serve`: load config → open storage → build app → listen → close gracefully. */
export async function serve(env: Env = process.env): Promise<FastifyInstance> {
  loadDotEnv(env)
  const config = loadConfig(env)
  const nats = natsSettings(config)
  if (nats) await probeNats(nats)
  const storage = await openConfiguredStorage(config)
  const drain = new ShutdownDrain(config.shutdownDrain)
  const app = await buildApp(config, { storage, loggerInstance: serverLogger(config.logLevel), gracefulClose: { keepAliveDrainMs: KEEP_ALIVE_DRAIN_MS, drain } })
  if (config.defaultAdminInUse) {
    app.log.warn('!!! The built-in administrator "admin" still has the default password "admin". Set CLOUD_AUTH_USERS before exposing this server. !!!')
  }
  warnAboutPlainPasswords(config, app.log)
  await app.listen({ port: config.port, host: config.host })
  installSignalHandlers(app, drain)
  return app
}

/**
 * SIGTERM/SIGINT: drain (SHUTDOWN_DRAIN_SECONDS, 0 by default: none), then close within
 * SHUTDOWN_GRACE_MS (contract §1) and exit 0.
 */
function installSignalHandlers(app: FastifyInstance, drain: ShutdownDrain): void {
  let closing = false
  const shutdown = async (signal: string) => {
    if (closing) return
    closing = true
    const started = Date.now()
    const end = await drain.drain((checkers) => app.log.info({ signal, checkers }, 'draining: /readyz answers 503 while requests are still served'))
    app.log.info({ signal, drain: end, drainMs: Date.now() - started }, 'shutting down')
    const force = setTimeout(() => {
      app.log.error('graceful shutdown took too long; exiting')
      process.exit(1)
    }, SHUTDOWN_GRACE_MS)
    force.unref()
    await app.close().then(
      () => process.exit(0),
      (err) => {
        app.log.error({ err }, 'error while closing')
        process.exit(1)
      },
    )
  }
  process.once('SIGTERM', () => void shutdown('SIGTERM'))
  process.once('SIGINT', () => void shutdown('SIGINT'))
}
