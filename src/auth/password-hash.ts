import { argon2, argon2Sync, randomBytes, scrypt, scryptSync } from 'node:crypto'
import { sameDigest } from './secrets.js'

/**
 * Gateway user passwords as PHC strings (contract §3), salt and hash in standard base64 without
 * padding (the PHC string format, as passlib and the argon2 reference tool write it):
 * - argon2id (and argon2i/argon2d, which other tools write): `$argon2id$v=19$m=<KiB>,t=<passes>,p=<lanes>$<salt>$<hash>`,
 *   computed by `node:crypto`'s argon2 (Node ≥ 24.7);
 * - scrypt: `$scrypt$ln=<log2 N>,r=<block size>,p=<parallelism>$<salt>$<hash>`.
 *
 * New hashes (`fleetgate hash-password`, plain-text passwords hashed at start) are argon2id with
 * OWASP's minimum parameters, m = 19 MiB, t = 2, p = 1: about 40 ms of one core on the 2-core build
 * machine (scrypt ln=15, the former default, ≈ 110 ms and 32 MiB). Both run on libuv's thread pool,
 * so a login never blocks the event loop.
 */
export interface ScryptParams {
  /** log2 of the CPU/memory cost N. */
  ln: number
  r: number
  p: number
}

export interface Argon2Params {
  /** Memory in KiB. */
  m: number
  /** Passes over the memory. */
  t: number
  /** Lanes. */
  p: number
}

export type Argon2Variant = 'argon2id' | 'argon2i' | 'argon2d'

/** A scheme and its parameters: what a new hash is made with, or what an existing one asks for. */
export type HashSpec = { scheme: 'scrypt'; params: ScryptParams } | { scheme: Argon2Variant; params: Argon2Params }

export type PasswordHash = HashSpec & { salt: Buffer; hash: Buffer }

export const DEFAULT_HASH_SPEC: Readonly<HashSpec> = Object.freeze({ scheme: 'argon2id', params: Object.freeze({ m: 19456, t: 2, p: 1 }) })

const ARGON2_VERSION = 19
const SALT_BYTES = 16
const HASH_BYTES = 32
const MAX_MEMORY = 256 * 1024 * 1024
/** Bounds on what a configured hash may ask for: a typo must not make every login take a minute. */
const LIMITS = {
  scrypt: { ln: [1, 20], r: [1, 32], p: [1, 16] },
  argon2: { m: [8, MAX_MEMORY / 1024], t: [1, 16], p: [1, 16] },
  salt: [8, 64],
  hash: [16, 64],
} as const

/** A malformed or unsupported PHC string; the message says what is wrong, never the hash. */
export class PasswordHashError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'PasswordHashError'
  }
}

const isArgon2 = (scheme: string): scheme is Argon2Variant => scheme === 'argon2id' || scheme === 'argon2i' || scheme === 'argon2d'

/** Standard base64 without padding, canonical (re-encoding gives the same text). */
function decodeB64(text: string, what: string, [min, max]: readonly [number, number]): Buffer {
  if (!/^[A-Za-z0-9+/]+$/.test(text)) throw new PasswordHashError(`${what} is not base64 without padding`)
  const bytes = Buffer.from(text, 'base64')
  if (bytes.toString('base64').replace(/=+$/, '') !== text) throw new PasswordHashError(`${what} is not canonical base64`)
  if (bytes.length < min || bytes.length > max) throw new PasswordHashError(`${what} must be ${min}–${max} bytes, got ${bytes.length}`)
  return bytes
}

const encodeB64 = (bytes: Buffer) => bytes.toString('base64').replace(/=+$/, '')

/** `k=<n>,k=<n>,…` with exactly these keys in this order, each within its bounds. */
function parseNumbers<K extends string>(text: string, scheme: string, limits: Readonly<Record<K, readonly [number, number]>>): Record<K, number> {
  const keys = Object.keys(limits) as K[]
  const form = keys.map((key) => `${key}=<n>`).join(',')
  const pattern = new RegExp(`^${keys.map((key) => `${key}=([1-9][0-9]{0,9})`).join(',')}$`)
  const match = pattern.exec(text)
  if (!match) throw new PasswordHashError(`${scheme} parameters must read ${form}`)
  const values = {} as Record<K, number>
  keys.forEach((key, i) => {
    const value = Number(match[i + 1])
    const [min, max] = limits[key]
    if (value < min || value > max) throw new PasswordHashError(`${scheme} ${key} must be between ${min} and ${max}, got ${value}`)
    values[key] = value
  })
  return values
}

function parseSpec(fields: string[]): HashSpec {
  const scheme = fields[1]!
  if (scheme === 'scrypt') {
    if (fields.length !== 5) throw new PasswordHashError('a scrypt PHC string has the form $scrypt$ln=…,r=…,p=…$<salt>$<hash>')
    const params = parseNumbers(fields[2]!, scheme, LIMITS.scrypt)
    if (128 * params.r * 2 ** params.ln > MAX_MEMORY) throw new PasswordHashError('scrypt parameters ask for more than 256 MiB of memory')
    return { scheme, params }
  }
  if (isArgon2(scheme)) {
    if (fields.length !== 6) throw new PasswordHashError(`an ${scheme} PHC string has the form $${scheme}$v=19$m=…,t=…,p=…$<salt>$<hash>`)
    if (fields[2] !== `v=${ARGON2_VERSION}`) throw new PasswordHashError(`${scheme} version must be v=${ARGON2_VERSION} (the only one node:crypto computes)`)
    const params = parseNumbers(fields[3]!, scheme, LIMITS.argon2)
    if (params.m < 8 * params.p) throw new PasswordHashError(`${scheme} m must be at least 8 KiB per lane (8 × p = ${8 * params.p})`)
    return { scheme, params }
  }
  throw new PasswordHashError(`unknown hash scheme ${JSON.stringify(scheme)} (expected argon2id or scrypt)`)
}

/** Parses a `password_hash`; throws PasswordHashError for anything but a well-formed argon2 or scrypt PHC string. */
export function parsePasswordHash(phc: string): PasswordHash {
  const fields = phc.split('$')
  if (fields[0] !== '' || fields.length < 2) throw new PasswordHashError('is not a PHC string ($argon2id$v=19$m=…,t=…,p=…$<salt>$<hash> or $scrypt$ln=…,r=…,p=…$<salt>$<hash>)')
  const spec = parseSpec(fields)
  const salt = decodeB64(fields[fields.length - 2]!, 'salt', LIMITS.salt)
  const hash = decodeB64(fields[fields.length - 1]!, 'hash', LIMITS.hash)
  return { ...spec, salt, hash }
}

export function formatPasswordHash(stored: PasswordHash): string {
  const tail = `${encodeB64(stored.salt)}$${encodeB64(stored.hash)}`
  if (stored.scheme === 'scrypt') {
    const { ln, r, p } = stored.params
    return `$scrypt$ln=${ln},r=${r},p=${p}$${tail}`
  }
  const { m, t, p } = stored.params
  return `$${stored.scheme}$v=${ARGON2_VERSION}$m=${m},t=${t},p=${p}$${tail}`
}

/** Memory scrypt needs for these parameters (128·N·r for V, plus 128·r·p for B), with headroom. */
const scryptOptions = ({ ln, r, p }: ScryptParams) => ({ N: 2 ** ln, r, p, maxmem: 128 * r * (2 ** ln + p + 2) + 1024 * 1024 })

const argon2Parameters = (params: Argon2Params, password: string, salt: Buffer, length: number) => ({
  message: password,
  nonce: salt,
  parallelism: params.p,
  tagLength: length,
  memory: params.m,
  passes: params.t,
})

const derive = (password: string, salt: Buffer, spec: HashSpec, length: number): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const done = (err: Error | null, key: Buffer) => (err ? reject(err) : resolve(key))
    if (spec.scheme === 'scrypt') scrypt(password, salt, length, scryptOptions(spec.params), done)
    else argon2(spec.scheme, argon2Parameters(spec.params, password, salt, length), done)
  })

const deriveSync = (password: string, salt: Buffer, spec: HashSpec, length: number): Buffer =>
  spec.scheme === 'scrypt' ? scryptSync(password, salt, length, scryptOptions(spec.params)) : argon2Sync(spec.scheme, argon2Parameters(spec.params, password, salt, length))

/** A new PHC string for `password`, with a random 16-byte salt. */
export async function hashPassword(password: string, spec: HashSpec = DEFAULT_HASH_SPEC): Promise<string> {
  const salt = randomBytes(SALT_BYTES)
  return formatPasswordHash({ ...spec, salt, hash: await derive(password, salt, spec, HASH_BYTES) })
}

/** The same, blocking: for the start (plain-text passwords of the configuration), never for a request. */
export function hashPasswordSync(password: string, spec: HashSpec = DEFAULT_HASH_SPEC): string {
  const salt = randomBytes(SALT_BYTES)
  return formatPasswordHash({ ...spec, salt, hash: deriveSync(password, salt, spec, HASH_BYTES) })
}

/** Whether `password` matches; the comparison is constant-time. */
export async function verifyPassword(password: string, stored: PasswordHash): Promise<boolean> {
  return sameDigest(await derive(password, stored.salt, stored, stored.hash.length), stored.hash)
}

/** The same, blocking: for the start only (is the configured admin still on "admin"?). */
export function verifyPasswordSync(password: string, stored: PasswordHash): boolean {
  return sameDigest(deriveSync(password, stored.salt, stored, stored.hash.length), stored.hash)
}

/**
 * A hash no password matches (random salt and digest) of the given scheme and parameters:
 * verifying a login for an unknown user against it costs the same work as for a known user.
 */
export function unmatchableHash(spec: HashSpec): PasswordHash {
  return { ...structuredClone(spec), salt: randomBytes(SALT_BYTES), hash: randomBytes(HASH_BYTES) } as PasswordHash
}

/**
 * Relative work of a hash, in bytes of memory written: scrypt fills and reads N·r·128 bytes p
 * times, argon2 makes t passes over m KiB. Used to give unknown users the dearest known cost.
 */
export const hashCost = (spec: HashSpec): number =>
  spec.scheme === 'scrypt' ? 2 * 128 * 2 ** spec.params.ln * spec.params.r * spec.params.p : spec.params.m * 1024 * spec.params.t
