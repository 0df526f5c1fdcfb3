import { randomBytes, scrypt, scryptSync } from 'node:crypto'
import { sameDigest } from './secrets.js'

/**
 * Gateway user passwords as PHC strings of scrypt (contract §3):
 * `$scrypt$ln=<log2 N>,r=<block size>,p=<parallelism>$<salt>$<hash>`, salt and hash in
 * standard base64 without padding (the PHC string format, as passlib writes it).
 *
 * Cost: ln=15, r=8, p=1 is 32 MiB of memory and about 100 ms of one core per hash on the
 * 2-core build machine (measured: ln=14 ≈ 46 ms, ln=15 ≈ 109 ms, ln=16 ≈ 223 ms). Logins use
 * the asynchronous `scrypt`, which runs on libuv's thread pool, so a login never blocks the
 * event loop; at most 4 hashes run at once (the pool's size), bounding memory at 128 MiB.
 *
 * argon2id (`$argon2id$…`) is named by the contract, but Node 20's node:crypto has no argon2
 * and this build adds no native dependency: such a hash is refused as configuration rather
 * than accepted unchecked. `fleetgate hash-password` makes a scrypt hash.
 */
export interface ScryptParams {
  /** log2 of the CPU/memory cost N. */
  ln: number
  r: number
  p: number
}

export interface PasswordHash {
  params: ScryptParams
  salt: Buffer
  hash: Buffer
}

export const DEFAULT_SCRYPT_PARAMS: Readonly<ScryptParams> = Object.freeze({ ln: 15, r: 8, p: 1 })

const SALT_BYTES = 16
const HASH_BYTES = 32
/** Bounds on what a configured hash may ask for: a typo must not make every login take a minute. */
const LIMITS = { ln: [1, 20], r: [1, 32], p: [1, 16], salt: [8, 64], hash: [16, 64] } as const
const MAX_MEMORY = 256 * 1024 * 1024

/** A malformed or unsupported PHC string; the message says what is wrong, never the hash. */
export class PasswordHashError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'PasswordHashError'
  }
}

/** Memory scrypt needs for these parameters (128·N·r for V, plus 128·r·p for B), with headroom. */
function maxmem({ ln, r, p }: ScryptParams): number {
  return 128 * r * (2 ** ln + p + 2) + 1024 * 1024
}

const options = (params: ScryptParams) => ({ N: 2 ** params.ln, r: params.r, p: params.p, maxmem: maxmem(params) })

/** Standard base64 without padding, canonical (re-encoding gives the same text). */
function decodeB64(text: string, what: string, [min, max]: readonly [number, number]): Buffer {
  if (!/^[A-Za-z0-9+/]+$/.test(text)) throw new PasswordHashError(`${what} is not base64 without padding`)
  const bytes = Buffer.from(text, 'base64')
  if (bytes.toString('base64').replace(/=+$/, '') !== text) throw new PasswordHashError(`${what} is not canonical base64`)
  if (bytes.length < min || bytes.length > max) throw new PasswordHashError(`${what} must be ${min}–${max} bytes, got ${bytes.length}`)
  return bytes
}

const encodeB64 = (bytes: Buffer) => bytes.toString('base64').replace(/=+$/, '')

function parseParams(text: string): ScryptParams {
  const match = /^ln=([1-9][0-9]*),r=([1-9][0-9]*),p=([1-9][0-9]*)$/.exec(text)
  if (!match) throw new PasswordHashError('scrypt parameters must read ln=<n>,r=<n>,p=<n>')
  const params = { ln: Number(match[1]), r: Number(match[2]), p: Number(match[3]) }
  for (const key of ['ln', 'r', 'p'] as const) {
    const [min, max] = LIMITS[key]
    if (params[key] < min || params[key] > max) throw new PasswordHashError(`scrypt ${key} must be between ${min} and ${max}, got ${params[key]}`)
  }
  if (128 * params.r * 2 ** params.ln > MAX_MEMORY) throw new PasswordHashError('scrypt parameters ask for more than 256 MiB of memory')
  return params
}

/** Parses a `password_hash`; throws PasswordHashError for anything but a well-formed scrypt PHC string. */
export function parsePasswordHash(phc: string): PasswordHash {
  const fields = phc.split('$')
  if (fields[0] !== '' || fields.length < 2) throw new PasswordHashError('is not a PHC string ($scrypt$ln=…,r=…,p=…$<salt>$<hash>)')
  const id = fields[1]
  if (id === 'argon2id' || id === 'argon2i' || id === 'argon2d') {
    throw new PasswordHashError(`${id} is not supported by this build (Node's crypto has no argon2); use a scrypt hash from \`fleetgate hash-password\``)
  }
  if (id !== 'scrypt') throw new PasswordHashError(`unknown hash scheme ${JSON.stringify(id)} (expected scrypt)`)
  if (fields.length !== 5) throw new PasswordHashError('a scrypt PHC string has the form $scrypt$ln=…,r=…,p=…$<salt>$<hash>')
  const params = parseParams(fields[2]!)
  const salt = decodeB64(fields[3]!, 'salt', LIMITS.salt)
  const hash = decodeB64(fields[4]!, 'hash', LIMITS.hash)
  return { params, salt, hash }
}

export function formatPasswordHash({ params, salt, hash }: PasswordHash): string {
  return `$scrypt$ln=${params.ln},r=${params.r},p=${params.p}$${encodeB64(salt)}$${encodeB64(hash)}`
}

const derive = (password: string, salt: Buffer, params: ScryptParams, length: number): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    scrypt(password, salt, length, options(params), (err, key) => (err ? reject(err) : resolve(key)))
  })

/** A new PHC string for `password`, with a random 16-byte salt. */
export async function hashPassword(password: string, params: ScryptParams = DEFAULT_SCRYPT_PARAMS): Promise<string> {
  const salt = randomBytes(SALT_BYTES)
  return formatPasswordHash({ params, salt, hash: await derive(password, salt, params, HASH_BYTES) })
}

/** The same, blocking: for the start (plain-text passwords of the configuration), never for a request. */
export function hashPasswordSync(password: string, params: ScryptParams = DEFAULT_SCRYPT_PARAMS): string {
  const salt = randomBytes(SALT_BYTES)
  return formatPasswordHash({ params, salt, hash: scryptSync(password, salt, HASH_BYTES, options(params)) })
}

/** Whether `password` matches; the comparison is constant-time. */
export async function verifyPassword(password: string, stored: PasswordHash): Promise<boolean> {
  return sameDigest(await derive(password, stored.salt, stored.params, stored.hash.length), stored.hash)
}

/** The same, blocking: for the start only (is the configured admin still on "admin"?). */
export function verifyPasswordSync(password: string, stored: PasswordHash): boolean {
  return sameDigest(scryptSync(password, stored.salt, stored.hash.length, options(stored.params)), stored.hash)
}

/**
 * A hash no password matches (random salt and digest) with the given parameters: verifying a
 * login for an unknown user against it costs the same scrypt work as for a known user.
 */
export function unmatchableHash(params: ScryptParams): PasswordHash {
  return { params: { ...params }, salt: randomBytes(SALT_BYTES), hash: randomBytes(HASH_BYTES) }
}

/** Relative cost of a hash's parameters (N·r·p), to give unknown users the dearest known cost. */
export const hashCost = ({ ln, r, p }: ScryptParams): number => 2 ** ln * r * p
