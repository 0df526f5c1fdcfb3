import { createPublicKey, type KeyObject } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { isIP } from 'node:net'
import path from 'node:path'
import { hashPasswordSync, parsePasswordHash, PasswordHashError, verifyPasswordSync } from '../auth/password-hash.js'
import { isPlainObject } from '@fleetgate/device-agent/lib'
import { ConfigError } from './config-error.js'
import { CLUSTER_KEY_MIN_BYTES } from '../nats/bus-signature.js'
import { natsUrlHasCredentials } from '../nats/connect-nats.js'
import { readEnv, type EnvValues } from './env-schema.js'

export const ROLES = ['admin', 'user', 'wechat'] as const
export type Role = (typeof ROLES)[number]
export const CONFIGURABLE_ROLES = ['admin', 'user'] as const

export interface ConfiguredUser {
  /**
   * PHC string of the password (argon2id, or scrypt). A plain-text `password` of CLOUD_AUTH_USERS is hashed
   * here, at start, and the text is not kept (contract §3).
   */
  passwordHash: string
  /** True when CLOUD_AUTH_USERS gave this user a plain-text `password` (warned about in production). */
  plainTextPassword: boolean
  role: 'admin' | 'user'
  display_name: string
}

export type DatabaseTarget =
  | { kind: 'sqlite'; path: string }
  | { kind: 'sqlite-memory' }
  | { kind: 'postgres'; url: string; schema?: string }

export interface Config {
  port: number
  host: string
  dataDir: string
  database: DatabaseTarget
  natsUrl: string | undefined
  /** `NATS_CREDS`: a creds or nkey seed file authenticating this instance to NATS. */
  natsCreds: string | undefined
  /** `NATS_TLS_CA`: the PEM file of the private CA of the NATS server. */
  natsTlsCa: string | undefined
  /** `CLUSTER_KEY`: signs every message between instances (src/nats/bus-signature.ts); unset → unsigned. */
  clusterKey: string | undefined
  /** `INSTANCE_ID`: this process's name among several instances; unset → generated at start. */
  instanceId: string | undefined
  /** `TRUST_PROXY`: load balancers whose X-Forwarded-For names the client (rate limits, logs); unset → peer address. */
  trustProxy: readonly string[] | undefined
  /** `OPS_ENDPOINTS`: `private` keeps /docs, /openapi.json and /metrics to loopback and private-range clients (404 for others). */
  opsEndpoints: 'public' | 'private'
  /** `SHUTDOWN_DRAIN_SECONDS` / `SHUTDOWN_DRAIN_CHECKS`: the drain between SIGTERM and the listener closing (src/http/shutdown-drain.ts). */
  shutdownDrain: { maxMs: number; checks: number }
  authUsers: Readonly<Record<string, ConfiguredUser>>
  /** True while `admin` (built in or configured) has the password admin. */
  defaultAdminInUse: boolean
  jwtExpireHours: number
  /** `CLOUD_JWT_MAX_SESSION_HOURS`: /auth/refresh refuses a token whose session's first login is older. */
  jwtMaxSessionHours: number
  /** `LOGIN_HASH_CONCURRENCY`: password hashes running at once (64 more may wait). */
  loginHashConcurrency: number
  jwtSecret: string | undefined
  deviceRequestTimeoutMs: number
  deviceAliveSeconds: number
  deviceEnrollToken: string | undefined
  /** `DEVICE_LINK_MAX_AWAITING_PER_ADDRESS`: sockets from one client address awaiting `register` at once (1013 beyond). */
  deviceLinkMaxAwaitingPerAddress: number
  platformConsoleToken: string | undefined
  platformOfflineSeconds: number
  platformAutoRegister: boolean
  platformRequireDeviceToken: boolean
  commandAckTimeoutSeconds: number
  commandMaxAttempts: number
  commandTtlSeconds: number
  wechat: { appid: string; secret: string; apiBase: string } | undefined
  wechatApiBase: string
  firmwareRootPublicKey: KeyObject | undefined
  firmwareMaxBytes: number
  telemetryRetentionDays: number
  logRetentionDays: number
  /** Raw production events and state rows (§16); the rollups and jobs are kept 2 years. */
  productionRetentionDays: number
  rolloutStepTimeoutSeconds: number
  production: boolean
  logLevel: string
}

export type Env = Readonly<Record<string, string | undefined>>

/**
 * The built-in admin/admin. Its password is public, so its hash is computed once, here, with the
 * default parameters (a fixed salt reveals nothing about a password everybody knows), and no
 * start pays for it.
 */
const BUILT_IN_ADMIN: ConfiguredUser = Object.freeze({
  passwordHash: '$argon2id$v=19$m=19456,t=2,p=1$dbMKJ8uPzNe1E/mdjkivoQ$3YmUh4kdD7CLBxJd30rkPFui2jgep94jnIAqjJmLWo0',
  plainTextPassword: false,
  role: 'admin',
  display_name: 'Administrator',
})
const DEFAULT_ADMIN_PASSWORD = 'admin'

function text(env: Env, name: string): string | undefined {
  const value = env[name]
  return value === undefined || value === '' ? undefined : value
}

interface ParsedUsers {
  users: Record<string, ConfiguredUser>
  /** `admin` (built in or configured) still has the password "admin". */
  defaultAdminInUse: boolean
}

/** The user's `password_hash` (validated) or the hash of its plain-text `password`: exactly one of the two. */
function passwordOf(username: string, password: unknown, passwordHash: unknown): { passwordHash: string; plainTextPassword: boolean; isDefault: boolean } {
  const name = 'CLOUD_AUTH_USERS'
  if (password !== undefined && passwordHash !== undefined) {
    throw new ConfigError(name, `user ${username}: give either password or password_hash, not both`)
  }
  if (passwordHash !== undefined) {
    if (typeof passwordHash !== 'string') throw new ConfigError(name, `user ${username}: password_hash must be a string`)
    let parsed
    try {
      parsed = parsePasswordHash(passwordHash)
    } catch (err) {
      if (err instanceof PasswordHashError) throw new ConfigError(name, `user ${username}: password_hash ${err.message}`)
      throw err
    }
    // One hash at start to apply the production refusal to a hashed "admin" too.
    const isDefault = username === 'admin' && verifyPasswordSync(DEFAULT_ADMIN_PASSWORD, parsed)
    return { passwordHash, plainTextPassword: false, isDefault }
  }
  if (password === undefined) throw new ConfigError(name, `user ${username}: needs password or password_hash`)
  if (typeof password !== 'string' || password.length < 1 || password.length > 128) {
    throw new ConfigError(name, `user ${username}: password must be a string of 1–128 characters`)
  }
  return { passwordHash: hashPasswordSync(password), plainTextPassword: true, isDefault: username === 'admin' && password === DEFAULT_ADMIN_PASSWORD }
}

function parseUsers(env: Env): ParsedUsers {
  const name = 'CLOUD_AUTH_USERS'
  const raw = text(env, name)
  const users: Record<string, ConfiguredUser> = Object.create(null)
  let defaultAdminInUse = false
  if (raw !== undefined) {
    let parsed: unknown
    try {
      parsed = JSON.parse(raw)
    } catch {
      throw new ConfigError(name, 'is not valid JSON')
    }
    if (!isPlainObject(parsed)) {
      throw new ConfigError(name, 'must be a JSON object keyed by username')
    }
    for (const [username, entry] of Object.entries(parsed)) {
      if (!/^[A-Za-z0-9._@-]{1,128}$/.test(username) || username.startsWith('wechat_')) {
        throw new ConfigError(name, `invalid username ${JSON.stringify(username)}`)
      }
      if (typeof entry !== 'object' || entry === null) throw new ConfigError(name, `user ${username}: expected an object`)
      const { password, password_hash, role, display_name } = entry as Record<string, unknown>
      if (role !== 'admin' && role !== 'user') {
        throw new ConfigError(name, `user ${username}: unknown role ${JSON.stringify(role)} (expected admin or user)`)
      }
      if (display_name !== undefined && typeof display_name !== 'string') {
        throw new ConfigError(name, `user ${username}: display_name must be a string`)
      }
      const { passwordHash, plainTextPassword, isDefault } = passwordOf(username, password, password_hash)
      if (isDefault && role === 'admin') defaultAdminInUse = true
      users[username] = Object.freeze({ passwordHash, plainTextPassword, role, display_name: display_name ?? username })
    }
  }
  if (!users.admin) {
    users.admin = BUILT_IN_ADMIN
    defaultAdminInUse = true
  }
  return { users, defaultAdminInUse }
}

function parseDatabase(env: Env, dataDir: string): DatabaseTarget {
  const raw = text(env, 'DATABASE_URL')
  if (raw === undefined) return { kind: 'sqlite', path: path.join(dataDir, 'fleetgate.db') }
  if (raw === 'sqlite::memory:' || raw === 'sqlite://:memory:') return { kind: 'sqlite-memory' }
  if (raw.startsWith('sqlite:')) {
    const file = raw.slice('sqlite:'.length).replace(/^\/\//, '')
    if (!file) throw new ConfigError('DATABASE_URL', 'sqlite: needs a file path')
    return { kind: 'sqlite', path: file }
  }
  if (/^postgres(ql)?:\/\//.test(raw)) {
    try {
      new URL(raw)
    } catch {
      throw new ConfigError('DATABASE_URL', 'is not a valid postgres:// URL')
    }
    return { kind: 'postgres', url: raw }
  }
  throw new ConfigError('DATABASE_URL', 'expected sqlite:<path>, sqlite::memory: or postgres://…')
}

function parseRootKey(env: Env): KeyObject | undefined {
  const name = 'FIRMWARE_ROOT_PUBKEY'
  const raw = text(env, name)
  if (raw === undefined) return undefined
  let pem = raw
  if (!raw.trimStart().startsWith('-----BEGIN')) {
    try {
      pem = readFileSync(raw, 'utf8')
    } catch (err) {
      throw new ConfigError(name, `cannot read key file ${raw}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`)
    }
  }
  let key: KeyObject
  try {
    key = createPublicKey(pem)
  } catch {
    throw new ConfigError(name, 'is not a PEM public key')
  }
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
    throw new ConfigError(name, 'must be an ECDSA P-256 public key')
  }
  return key
}

const PROXY_NAMES = ['loopback', 'linklocal', 'uniquelocal']

/** `TRUST_PROXY`: addresses, CIDR ranges or proxy-addr's names (loopback, linklocal, uniquelocal). */
function parseTrustProxy(raw: string | undefined): readonly string[] | undefined {
  if (raw === undefined) return undefined
  const entries = raw.split(',').map((s) => s.trim()).filter(Boolean)
  for (const entry of entries) {
    if (PROXY_NAMES.includes(entry)) continue
    const [address = '', prefix, extra] = entry.split('/')
    const family = isIP(address)
    const maxPrefix = family === 6 ? 128 : 32
    const prefixOk = prefix === undefined || (/^[0-9]{1,3}$/.test(prefix) && Number(prefix) <= maxPrefix)
    if (!family || !prefixOk || extra !== undefined) throw new ConfigError('TRUST_PROXY', `${JSON.stringify(entry)} is not an address, a CIDR range or one of ${PROXY_NAMES.join(', ')}`)
  }
  if (entries.length === 0) throw new ConfigError('TRUST_PROXY', 'lists no address')
  return Object.freeze(entries)
}

/** Shortest `CLOUD_JWT_SECRET` production accepts, in bytes (HS256: a key as long as the hash). */
export const MIN_PRODUCTION_JWT_SECRET_BYTES = 32
/** Shortest `PLATFORM_CONSOLE_TOKEN` production accepts, in characters. */
export const MIN_PRODUCTION_CONSOLE_TOKEN_CHARS = 32

/**
 * The production refusals of contract §17 (besides the default admin password and the NATS
 * settings): settings fine on a developer's machine that leave a server reachable from the
 * internet open. Throws a ConfigError naming the first offending variable.
 */
function refuseUnsafeProduction(e: EnvValues): void {
  if (!e.PLATFORM_REQUIRE_DEVICE_TOKEN) {
    throw new ConfigError('PLATFORM_REQUIRE_DEVICE_TOKEN', 'must be true with NODE_ENV=production: without it anyone who knows a device id can act as that device')
  }
  if (e.DEVICE_ENROLL_TOKEN === undefined) {
    throw new ConfigError('DEVICE_ENROLL_TOKEN', 'must be set with NODE_ENV=production: without it anyone can register a new machine id')
  }
  if (e.CLOUD_JWT_SECRET !== undefined && Buffer.byteLength(e.CLOUD_JWT_SECRET, 'utf8') < MIN_PRODUCTION_JWT_SECRET_BYTES) {
    throw new ConfigError('CLOUD_JWT_SECRET', `must be at least ${MIN_PRODUCTION_JWT_SECRET_BYTES} bytes with NODE_ENV=production (or unset: generated and stored)`)
  }
  if (e.PLATFORM_CONSOLE_TOKEN !== undefined && [...e.PLATFORM_CONSOLE_TOKEN].length < MIN_PRODUCTION_CONSOLE_TOKEN_CHARS) {
    throw new ConfigError('PLATFORM_CONSOLE_TOKEN', `must be at least ${MIN_PRODUCTION_CONSOLE_TOKEN_CHARS} characters with NODE_ENV=production (or unset: generated and stored)`)
  }
}

const clusterKeyTooShort = (key: string) =>
  Buffer.byteLength(key, 'utf8') < CLUSTER_KEY_MIN_BYTES ? `must be at least ${CLUSTER_KEY_MIN_BYTES} bytes (got ${Buffer.byteLength(key, 'utf8')})` : undefined

/**
 * §17, the bus between instances: with NODE_ENV=production and NATS_URL set, NATS must be told
 * who we are (credentials in NATS_URL or NATS_CREDS) and every message must be signed (CLUSTER_KEY).
 */
export function busProductionProblems(env: Pick<EnvValues, 'NATS_URL' | 'NATS_CREDS' | 'CLUSTER_KEY'>): { name: string; message: string }[] {
  if (!env.NATS_URL) return []
  const problems: { name: string; message: string }[] = []
  if (!env.NATS_CREDS && !natsUrlHasCredentials(env.NATS_URL)) {
    problems.push({ name: 'NATS_URL', message: 'NODE_ENV=production refuses a NATS_URL without credentials (nats://user:pass@host:port, nats://token@host:port) while NATS_CREDS is unset' })
  }
  if (!env.CLUSTER_KEY) problems.push({ name: 'CLUSTER_KEY', message: 'NODE_ENV=production with NATS_URL requires CLUSTER_KEY (at least 32 bytes, the same on every instance) to sign messages between instances' })
  else {
    const short = clusterKeyTooShort(env.CLUSTER_KEY)
    if (short) problems.push({ name: 'CLUSTER_KEY', message: short })
  }
  return problems
}

/**
 * Parses and validates the environment (declared once, in `env-schema.ts`). Pure: reads only
 * the firmware key file, creates nothing.
 */
export function loadConfig(env: Env = process.env): Config {
  const e = readEnv(env)
  const dataDir = e.DATA_DIR
  const { users: authUsers, defaultAdminInUse } = parseUsers(env)
  const production = e.NODE_ENV === 'production'
  if (production && defaultAdminInUse) {
    throw new ConfigError('CLOUD_AUTH_USERS', 'NODE_ENV=production refuses the default password of user admin; set another one')
  }
  if (production) refuseUnsafeProduction(e)
  const clusterKeyProblem = e.CLUSTER_KEY !== undefined ? clusterKeyTooShort(e.CLUSTER_KEY) : undefined
  if (clusterKeyProblem) throw new ConfigError('CLUSTER_KEY', clusterKeyProblem)
  const [busProblem] = production ? busProductionProblems(e) : []
  if (busProblem) throw new ConfigError(busProblem.name, busProblem.message)
  const appid = e.WECHAT_APPID
  const secret = e.WECHAT_SECRET
  const wechatApiBase = e.WECHAT_API_BASE.replace(/\/+$/, '')
  try {
    new URL(wechatApiBase)
  } catch {
    throw new ConfigError('WECHAT_API_BASE', 'is not a valid URL')
  }
  const config: Config = {
    port: e.PORT,
    host: e.HOST,
    dataDir,
    database: parseDatabase(env, dataDir),
    natsUrl: e.NATS_URL,
    natsCreds: e.NATS_CREDS,
    natsTlsCa: e.NATS_TLS_CA,
    clusterKey: e.CLUSTER_KEY,
    instanceId: e.INSTANCE_ID,
    trustProxy: parseTrustProxy(e.TRUST_PROXY),
    opsEndpoints: e.OPS_ENDPOINTS as Config['opsEndpoints'],
    shutdownDrain: Object.freeze({ maxMs: Math.round(e.SHUTDOWN_DRAIN_SECONDS * 1000), checks: e.SHUTDOWN_DRAIN_CHECKS }),
    authUsers: Object.freeze(authUsers),
    defaultAdminInUse,
    jwtExpireHours: e.CLOUD_JWT_EXPIRE_HOURS,
    jwtMaxSessionHours: e.CLOUD_JWT_MAX_SESSION_HOURS,
    loginHashConcurrency: e.LOGIN_HASH_CONCURRENCY,
    jwtSecret: e.CLOUD_JWT_SECRET,
    deviceRequestTimeoutMs: e.DEVICE_REQUEST_TIMEOUT_MS,
    deviceAliveSeconds: e.DEVICE_ALIVE_SECONDS,
    deviceEnrollToken: e.DEVICE_ENROLL_TOKEN,
    deviceLinkMaxAwaitingPerAddress: e.DEVICE_LINK_MAX_AWAITING_PER_ADDRESS,
    platformConsoleToken: e.PLATFORM_CONSOLE_TOKEN,
    platformOfflineSeconds: e.PLATFORM_OFFLINE_SECONDS,
    platformAutoRegister: e.PLATFORM_AUTO_REGISTER,
    platformRequireDeviceToken: e.PLATFORM_REQUIRE_DEVICE_TOKEN,
    commandAckTimeoutSeconds: e.COMMAND_ACK_TIMEOUT_SECONDS,
    commandMaxAttempts: e.COMMAND_MAX_ATTEMPTS,
    commandTtlSeconds: e.COMMAND_TTL_SECONDS,
    wechat: appid && secret ? { appid, secret, apiBase: wechatApiBase } : undefined,
    wechatApiBase,
    firmwareRootPublicKey: parseRootKey(env),
    firmwareMaxBytes: e.FIRMWARE_MAX_BYTES,
    telemetryRetentionDays: e.TELEMETRY_RETENTION_DAYS,
    logRetentionDays: e.LOG_RETENTION_DAYS,
    productionRetentionDays: e.PRODUCTION_RETENTION_DAYS,
    rolloutStepTimeoutSeconds: e.ROLLOUT_STEP_TIMEOUT_SECONDS,
    production,
    logLevel: e.LOG_LEVEL,
  }
  return Object.freeze(config)
}
