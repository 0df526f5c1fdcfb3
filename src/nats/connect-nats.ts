import { readFileSync } from 'node:fs'
import { connect, credsAuthenticator, nkeyAuthenticator, type ConnectionOptions, type NatsConnection } from 'nats'
import { ConfigError } from '../config/config-error.js'

/** What a caller may choose; servers, time-out and reconnection are the same for every connection. */
export type NatsOptions = Pick<ConnectionOptions, 'noEcho' | 'noAsyncTraces'>

/**
 * Where NATS is and how to prove who we are: `NATS_URL` (a comma-separated server list, each
 * `nats://[user:pass@ | token@]host:port` or `tls://…`), `NATS_CREDS` (a creds file or an nkey
 * seed file), `NATS_TLS_CA` (a private CA's PEM file) and `CLUSTER_KEY` (signs every message:
 * src/nats/bus-signature.ts). A bare string is a URL with nothing else.
 */
export interface NatsSettings {
  url: string
  creds?: string | undefined
  tlsCa?: string | undefined
  clusterKey?: string | undefined
}

/** The NATS part of the configuration, or undefined without NATS_URL (one instance). */
export function natsSettings(config: { natsUrl: string | undefined; natsCreds?: string | undefined; natsTlsCa?: string | undefined; clusterKey?: string | undefined }): NatsSettings | undefined {
  if (!config.natsUrl) return undefined
  return { url: config.natsUrl, creds: config.natsCreds, tlsCa: config.natsTlsCa, clusterKey: config.clusterKey }
}

export const asNatsSettings = (nats: string | NatsSettings): NatsSettings => (typeof nats === 'string' ? { url: nats } : nats)

interface ParsedUrl {
  servers: string[]
  /** User and password, or a token, from the first server naming any (the client itself ignores URL credentials). */
  auth: Pick<ConnectionOptions, 'user' | 'pass' | 'token'>
  tls: boolean
}

/** Splits NATS_URL into `host:port` servers and the credentials and scheme they carry. */
export function parseNatsUrl(natsUrl: string): ParsedUrl {
  const parsed: ParsedUrl = { servers: [], auth: {}, tls: false }
  for (const entry of natsUrl.split(',').map((s) => s.trim()).filter(Boolean)) {
    let url: URL
    try {
      url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(entry) ? entry : `nats://${entry}`)
    } catch {
      throw new ConfigError('NATS_URL', `${JSON.stringify(redact(entry))} is not a server address (nats://[user:pass@]host:port)`)
    }
    if (url.protocol === 'tls:') parsed.tls = true
    else if (url.protocol !== 'nats:') throw new ConfigError('NATS_URL', `unknown scheme ${url.protocol} (expected nats:// or tls://)`)
    if (!url.hostname) throw new ConfigError('NATS_URL', `${JSON.stringify(redact(entry))} names no host`)
    parsed.servers.push(`${url.hostname}:${url.port || '4222'}`)
    if (url.username && !parsed.auth.user && !parsed.auth.token) {
      const name = decodeURIComponent(url.username)
      parsed.auth = url.password ? { user: name, pass: decodeURIComponent(url.password) } : { token: name }
    }
  }
  if (parsed.servers.length === 0) throw new ConfigError('NATS_URL', 'names no server')
  return parsed
}

/** Whether NATS_URL carries a user and password or a token (§17's production check). */
export function natsUrlHasCredentials(natsUrl: string): boolean {
  try {
    const { auth } = parseNatsUrl(natsUrl)
    return Boolean(auth.user || auth.token)
  } catch {
    return false
  }
}

/** The entry without its credentials, for messages. */
const redact = (entry: string) => entry.replace(/\/\/[^@/]*@/, '//***@')

function connectionOptions(nats: NatsSettings): ConnectionOptions {
  const { servers, auth, tls } = parseNatsUrl(nats.url)
  const options: ConnectionOptions = { servers, ...auth }
  if (nats.creds) options.authenticator = credentialsAuthenticator(nats.creds)
  if (tls || nats.tlsCa) options.tls = nats.tlsCa ? { caFile: nats.tlsCa } : {}
  return options
}

/** A creds file (user JWT and nkey seed, as `nsc` writes it) or a file holding only an nkey seed. */
function credentialsAuthenticator(file: string): NonNullable<ConnectionOptions['authenticator']> {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (err) {
    throw new ConfigError('NATS_CREDS', `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`)
  }
  if (text.includes('BEGIN NATS USER JWT')) return credsAuthenticator(new TextEncoder().encode(text))
  const seed = text.trim()
  if (/^SU[A-Z2-7]{50,}$/.test(seed)) return nkeyAuthenticator(new TextEncoder().encode(seed))
  throw new ConfigError('NATS_CREDS', `${file} is neither a creds file nor an nkey user seed (SU…)`)
}

/** A failure to connect, as a refusal naming NATS_URL (and saying when credentials were refused). */
function refusal(err: unknown, nats: NatsSettings): ConfigError {
  if (err instanceof ConfigError) return err
  const { code, message } = err as { code?: string; message?: string }
  if (code === 'AUTHORIZATION_VIOLATION' || code === 'AUTHENTICATION_EXPIRED' || /authoriz|authentic/i.test(message ?? '')) {
    const given = nats.creds ? 'the credentials of NATS_CREDS' : natsUrlHasCredentials(nats.url) ? 'the credentials in NATS_URL' : 'no credentials (NATS_URL names none, NATS_CREDS is unset)'
    return new ConfigError('NATS_URL', `NATS refused the connection: authorization violation with ${given}`)
  }
  if (/certificate/i.test(message ?? '')) return new ConfigError('NATS_URL', `NATS TLS failed: ${message} (a server certificate from a private CA needs NATS_TLS_CA)`)
  return new ConfigError('NATS_URL', `NATS unreachable: ${message ?? String(err)}`)
}

/**
 * Opens a connection to NATS named `name` (shown by the server's monitoring). Start fails after
 * 5 s; once up, the client reconnects forever, once a second. A refusal at start names NATS_URL.
 */
export async function connectNats(nats: string | NatsSettings, name: string, options: NatsOptions = {}): Promise<NatsConnection> {
  const settings = asNatsSettings(nats)
  try {
    return await connect({
      ...connectionOptions(settings),
      name,
      timeout: 5000,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 1000,
      ...options,
    })
  } catch (err) {
    throw refusal(err, settings)
  }
}

/** Checks that NATS answers, before anything is opened or created (a refusal names NATS_URL). */
export async function probeNats(nats: string | NatsSettings): Promise<void> {
  const settings = asNatsSettings(nats)
  try {
    const nc = await connect({ ...connectionOptions(settings), name: 'fleetgate-probe', timeout: 5000, reconnect: false })
    await nc.close()
  } catch (err) {
    throw refusal(err, settings)
  }
}

/** Closes a connection after delivering what it holds, waiting at most 2 s for the drain. */
export async function drainNats(nc: NatsConnection): Promise<void> {
  if (nc.isClosed()) return
  const drained = nc.drain().catch(() => undefined)
  const timeout = new Promise<void>((resolve) => setTimeout(resolve, 2000).unref())
  await Promise.race([drained, timeout])
  if (!nc.isClosed()) await nc.close()
}
