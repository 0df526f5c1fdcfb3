import { createHash, randomBytes } from 'node:crypto'
import { sameDigest } from './secrets.js'

/**
 * Device keys are stored as `sha256$<salt>$<digest>` with a random 16-byte salt per device.
 *
 * Why not scrypt: a key is a 16–256 character machine secret, not a memorable password, so a
 * memory-hard KDF buys little against offline guessing, while the whole fleet re-registers at
 * once after every gateway restart and anyone can send register frames for known ids: a
 * deliberately slow hash there turns into a CPU denial of service. The salt stops precomputed
 * tables and makes equal keys hash differently; the `sha256$` prefix leaves room for another
 * scheme later.
 */
const SCHEME = 'sha256'

const digest = (salt: Buffer, key: string) => createHash('sha256').update(salt).update(key, 'utf8').digest()

export function hashDeviceKey(key: string): string {
  const salt = randomBytes(16)
  return `${SCHEME}$${salt.toString('base64url')}$${digest(salt, key).toString('base64url')}`
}

/** Constant-time comparison of a presented key with a stored hash; false for an unknown scheme. */
export function verifyDeviceKey(key: string, stored: string): boolean {
  const [scheme, salt, expected] = stored.split('$')
  if (scheme !== SCHEME || !salt || !expected) return false
  return sameDigest(digest(Buffer.from(salt, 'base64url'), key), Buffer.from(expected, 'base64url'))
}
