import { Type, type Static, type TSchema } from '@sinclair/typebox'
import Ajv, { type ErrorObject } from 'ajv'
import { ConfigError } from './config-error.js'

const PositiveInteger = (fallback: number, description: string) => Type.Integer({ exclusiveMinimum: 0, default: fallback, description })
const PositiveNumber = (fallback: number, description: string) => Type.Number({ exclusiveMinimum: 0, default: fallback, description })
const Flag = (description: string) => Type.Boolean({ default: false, description })
const Text = (description: string) => Type.Optional(Type.String({ description }))

/**
 * The environment of contract §1, declared once: every variable with its type, default and
 * meaning. `readEnv` decodes the text values into these types and validates them with Ajv;
 * `loadConfig` builds the typed, frozen `Config` from the result. README's configuration table
 * is checked against this schema.
 */
export const EnvSchema = Type.Object(
  {
    PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8080, description: 'listen port' }),
    HOST: Type.String({ default: '0.0.0.0', description: 'listen address' }),
    DATA_DIR: Type.String({ default: './data', description: 'SQLite file and other local state' }),
    DATABASE_URL: Text('sqlite:<path>, sqlite::memory: or postgres://…; unset: SQLite in DATA_DIR'),
    NATS_URL: Text('set: device requests routed across instances over NATS; nats://user:pass@host:port or nats://token@host:port for credentials, tls://… for TLS; comma-separated for several servers'),
    NATS_CREDS: Text('path to a NATS creds file (user JWT + nkey seed) or an nkey seed file, to authenticate to NATS'),
    NATS_TLS_CA: Text('path to the PEM certificate of a private CA that signed the NATS server\'s certificate (implies TLS)'),
    CLUSTER_KEY: Text('at least 32 bytes, the same on every instance: signs every message between instances over NATS (HMAC-SHA256); unsigned messages are ignored. Unset: unsigned (development only)'),
    INSTANCE_ID: Type.Optional(
      Type.String({ pattern: '^[A-Za-z0-9._:-]{1,64}$', description: "this instance's name among several (1–64 of A–Z a–z 0–9 . _ : -); unset: hostname-pid-random" }),
    ),
    SHUTDOWN_DRAIN_SECONDS: Type.Number({
      minimum: 0,
      maximum: 60,
      default: 0,
      description: 'SIGTERM: longest time /readyz answers 503 "draining" while requests are still served, before the listener closes (0: no drain)',
    }),
    SHUTDOWN_DRAIN_CHECKS: PositiveInteger(3, "SIGTERM: the drain ends early once every health checker has had this many \"draining\" answers (the load balancer's fall count + 1)"),
    TRUST_PROXY: Text('comma-separated addresses or CIDR ranges of trusted load balancers, whose X-Forwarded-For gives the client address; unset: the socket peer address'),
    OPS_ENDPOINTS: Type.String({
      enum: ['public', 'private'],
      default: 'public',
      description: 'private: /docs, /openapi.json and /metrics answer 404 unless the client address (forwarded by a trusted balancer, else the peer) is loopback or private-range',
    }),
    CLOUD_AUTH_USERS: Text('JSON object keyed by username: {password or password_hash (argon2id or scrypt PHC string), role, display_name}'),
    CLOUD_JWT_EXPIRE_HOURS: PositiveNumber(72, 'token lifetime'),
    CLOUD_JWT_MAX_SESSION_HOURS: PositiveNumber(720, "longest session: /auth/refresh refuses a token this long after the session's first login"),
    LOGIN_HASH_CONCURRENCY: PositiveInteger(4, 'password hashes run at once (at most 64 more wait; beyond: 503 server_busy)'),
    CLOUD_JWT_SECRET: Type.Optional(Type.String({ minLength: 16, description: 'HS256 secret; unset: generated once, stored in the database' })),
    DEVICE_REQUEST_TIMEOUT_MS: PositiveInteger(10_000, 'forwarded request time-out (504)'),
    DEVICE_ALIVE_SECONDS: PositiveNumber(60, 'a linked machine silent this long is not alive'),
    DEVICE_ENROLL_TOKEN: Text('when set, a machine id never seen before must present it'),
    DEVICE_LINK_MAX_AWAITING_PER_ADDRESS: PositiveInteger(100, 'device-link sockets from one client address that may await their register frame at once (1013 beyond); behind a balancer the address is the one it forwards when trusted (TRUST_PROXY), else its own'),
    PLATFORM_CONSOLE_TOKEN: Type.Optional(Type.String({ minLength: 8, description: 'X-Console-Token; unset: generated once, stored' })),
    PLATFORM_OFFLINE_SECONDS: PositiveNumber(60, 'platform liveness threshold'),
    PLATFORM_AUTO_REGISTER: Flag('a heartbeat from an unknown device id creates it'),
    PLATFORM_REQUIRE_DEVICE_TOKEN: Flag('device calls must carry X-Device-Token'),
    COMMAND_ACK_TIMEOUT_SECONDS: PositiveNumber(60, 'command delivery: acknowledgement time-out'),
    COMMAND_MAX_ATTEMPTS: PositiveInteger(5, 'command delivery: attempts'),
    COMMAND_TTL_SECONDS: PositiveNumber(86_400, 'command delivery: time to live'),
    WECHAT_APPID: Text('mini-program credentials'),
    WECHAT_SECRET: Text('mini-program credentials'),
    WECHAT_API_BASE: Type.String({ default: 'https://api.weixin.qq.com', description: 'identity service base URL' }),
    FIRMWARE_ROOT_PUBKEY: Text('PEM text or a path to a PEM file: root of the firmware signature chain (P-256)'),
    FIRMWARE_MAX_BYTES: PositiveInteger(16_777_216, 'firmware upload limit (413)'),
    TELEMETRY_RETENTION_DAYS: PositiveNumber(30, 'periodic pruning of telemetry'),
    LOG_RETENTION_DAYS: PositiveNumber(30, 'periodic pruning of device logs'),
    PRODUCTION_RETENTION_DAYS: Type.Number({
      minimum: 31,
      default: 90,
      description: 'raw production events and state changes are kept this long (at least 31: events up to 30 days late are accepted); hourly and daily figures and jobs are kept 2 years',
    }),
    ROLLOUT_STEP_TIMEOUT_SECONDS: PositiveNumber(900, 'a machine in a rollout silent this long after its last report fails (§14)'),
    NODE_ENV: Text('production refuses to start while admin has the password admin, PLATFORM_REQUIRE_DEVICE_TOKEN is not true, DEVICE_ENROLL_TOKEN is unset, or CLOUD_JWT_SECRET / PLATFORM_CONSOLE_TOKEN are set shorter than 32 bytes / characters'),
    LOG_LEVEL: Type.String({ enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], default: 'info', description: 'pino log level' }),
  },
  { additionalProperties: false },
)
export type EnvValues = Static<typeof EnvSchema>
export type EnvName = keyof EnvValues

const ajv = new Ajv.default({ allErrors: false, strict: false, coerceTypes: false, useDefaults: false })
const validate = ajv.compile<EnvValues>(EnvSchema)

const schemaOf = (name: string): TSchema => EnvSchema.properties[name as EnvName] as TSchema
const TRUE = ['1', 'true', 'yes', 'on']
const FALSE = ['0', 'false', 'no', 'off']

/** Text → the declared type. Numbers are plain decimals (no sign, exponent or hex). */
function decode(name: string, raw: string): unknown {
  const type = (schemaOf(name) as { type?: string }).type
  if (type === 'number' || type === 'integer') {
    const trimmed = raw.trim()
    if (!/^[0-9]+(\.[0-9]+)?$/.test(trimmed)) throw new ConfigError(name, `expected a number, got ${JSON.stringify(raw)}`)
    return Number(trimmed)
  }
  if (type === 'boolean') {
    const word = raw.trim().toLowerCase()
    if (TRUE.includes(word)) return true
    if (FALSE.includes(word)) return false
    throw new ConfigError(name, `expected true or false, got ${JSON.stringify(raw)}`)
  }
  return raw
}

function explain(name: string, error: ErrorObject, raw: string): string {
  const schema = schemaOf(name) as { minimum?: number; maximum?: number; exclusiveMinimum?: number; minLength?: number; enum?: string[] }
  switch (error.keyword) {
    case 'type':
      return error.params.type === 'integer' ? `expected a whole number, got ${JSON.stringify(raw)}` : `expected ${error.params.type}, got ${JSON.stringify(raw)}`
    case 'minimum':
    case 'maximum':
      return `must be between ${schema.minimum ?? 0} and ${schema.maximum ?? 'any'}, got ${raw}`
    case 'exclusiveMinimum':
      return `must be greater than ${schema.exclusiveMinimum}, got ${raw}`
    case 'minLength':
      return `must be at least ${schema.minLength} characters`
    case 'enum':
      return `expected one of ${schema.enum!.join(', ')}, got ${JSON.stringify(raw)}`
    default:
      return error.message ?? 'is invalid'
  }
}

/**
 * The declared variables of `env`, decoded, defaulted and validated. An empty value counts as
 * unset. Throws `ConfigError` naming the first invalid variable.
 */
export function readEnv(env: Readonly<Record<string, string | undefined>>): EnvValues {
  const values: Record<string, unknown> = {}
  for (const [name, schema] of Object.entries(EnvSchema.properties) as [string, TSchema][]) {
    const raw = env[name]
    if (raw !== undefined && raw !== '') values[name] = decode(name, raw)
    else if (schema.default !== undefined) values[name] = schema.default
  }
  if (validate(values)) return values
  const error = validate.errors![0]!
  const name = error.instancePath.split('/')[1]!
  throw new ConfigError(name, explain(name, error, env[name] ?? ''))
}
