import { createHash, timingSafeEqual } from 'node:crypto'

export const sha256Hex = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex')

/** Constant-time comparison of two secrets of any length (both are hashed first). */
export function sameSecret(presented: string, expected: string): boolean {
  const a = createHash('sha256').update(presented, 'utf8').digest()
  const b = createHash('sha256').update(expected, 'utf8').digest()
  return timingSafeEqual(a, b)
}

/** Constant-time comparison of a presented secret with a stored SHA-256 hex digest. */
export function matchesHash(presented: string, storedHex: string): boolean {
  const a = createHash('sha256').update(presented, 'utf8').digest()
  const b = Buffer.from(storedHex, 'hex')
  return b.length === a.length && timingSafeEqual(a, b)
}
