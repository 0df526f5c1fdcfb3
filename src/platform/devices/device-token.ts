import { randomBytes } from 'node:crypto'
import { sha256 } from '../../auth/secrets.js'

/**
 * A device token: 192 random bits, shown once at issue. Only its SHA-256 is stored; a fast
 * hash is enough for a random secret of that size (no dictionary to guess from).
 */
export function issueDeviceToken(): { token: string; hash: string } {
  const token = randomBytes(24).toString('base64url')
  return { token, hash: sha256(token).toString('hex') }
}
