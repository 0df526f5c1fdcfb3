import type { FastifyInstance } from 'fastify'
import { buildApp, type BuildOptions, type LoginOptions } from '../../src/app.js'
import { hashPasswordSync, type HashSpec } from '../../src/auth/password-hash.js'
import { loadConfig, type Config, type Env } from '../../src/config/config.js'
import type { DatabaseClock } from '../../src/storage/database-clock.js'
import { openStorage, type Db, type Dialect, type Storage } from '../../src/storage/storage.js'
import { testDatabase, type TestDatabase } from './dialects.js'

export interface TestApp {
  app: FastifyInstance
  config: Config
  database: TestDatabase
  storage: Storage
  /** Closes the app and drops its database. */
  close(): Promise<void>
}

export const TEST_USERS = {
  alice: { password: 'alice-password', role: 'user', display_name: 'Alice' },
  bob: { password: 'bob-password', role: 'user', display_name: 'Bob' },
  root: { password: 'root-password', role: 'admin', display_name: 'Root' },
}

/** Cheap scrypt parameters for test users: a test app should not pay ~40 ms per user at start. */
export const TEST_HASH_SPEC: HashSpec = { scheme: 'scrypt', params: { ln: 4, r: 8, p: 1 } }

/** TEST_USERS as CLOUD_AUTH_USERS, each with a `password_hash` (hashed once per test file). */
export const TEST_AUTH_USERS = JSON.stringify(
  Object.fromEntries(Object.entries(TEST_USERS).map(([name, { password, ...rest }]) => [name, { ...rest, password_hash: hashPasswordSync(password, TEST_HASH_SPEC) }])),
)

export interface TestAppOptions {
  wechatTimeoutMs?: number
  database?: TestDatabase
  consoleDir?: string
  /** Stands in for the database's clock (`storage.clock`): the times the app keeps in shared rows are then the test's. */
  clock?: DatabaseClock
  /** Login internals: the password-hash gate's bounds, the password check, the token clock. */
  login?: LoginOptions
  /** How long a session found live is taken as live, and its clock (SessionRevocations). */
  sessions?: BuildOptions['sessions']
  /** How often firmware download counts are written (the app's default: 10 s). */
  downloadFlushMs?: number
  /** Wraps the app's database handle (a test counts the statements it runs). */
  wrapDb?: (db: Db) => Db
}

/** A whole server on a fresh database of the given engine, built the way `serve` builds it. */
export async function startTestApp(dialect: Dialect, env: Env = {}, options: TestAppOptions = {}): Promise<TestApp> {
  const config = loadConfig({
    CLOUD_AUTH_USERS: TEST_AUTH_USERS,
    PLATFORM_CONSOLE_TOKEN: 'test-console-token',
    ...env,
  })
  const database = options.database ?? testDatabase(dialect)
  const opened = await openStorage(database.target)
  await opened.migrate()
  const storage: Storage =
    options.clock || options.wrapDb ? { ...opened, ...(options.clock ? { clock: options.clock } : {}), ...(options.wrapDb ? { db: options.wrapDb(opened.db) } : {}) } : opened
  const app = await buildApp({ ...config, database: database.target }, {
    storage,
    wechatTimeoutMs: options.wechatTimeoutMs,
    consoleDir: options.consoleDir,
    ...(options.login ? { login: options.login } : {}),
    ...(options.sessions ? { sessions: options.sessions } : {}),
    ...(options.downloadFlushMs !== undefined ? { downloadFlushMs: options.downloadFlushMs } : {}),
  })
  await app.ready()
  return {
    app,
    config,
    database,
    storage,
    async close() {
      await app.close()
      if (!options.database) await database.cleanup()
    },
  }
}

/** Logs in through the API and returns the bearer header value. */
export async function loginAs(app: FastifyInstance, username: string, password?: string): Promise<string> {
  const pw = password ?? (TEST_USERS as Record<string, { password: string }>)[username]?.password ?? 'admin'
  const res = await app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username, password: pw } })
  if (res.statusCode !== 200) throw new Error(`login ${username} failed: ${res.statusCode} ${res.body}`)
  return `Bearer ${res.json().token}`
}
