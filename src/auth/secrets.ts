import { createHash, timingSafeEqual } from 'node:crypto'

/** SHA-256 of a UTF-8 string. */
export const sha256 = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest()

/** Constant-time equality of two digests; false when their lengths differ. */
export function sameDigest(actual: Buffer, expected: Buffer): boolean {
  return actual.length === expected.length && timingSafeEqual(actual, expected)
}

/**
 * Constant-time equality of two secrets of any length: both are hashed first, so neither the
 * content nor the length of `expected` leaks through timing. A missing secret never matches.
 */
export function sameSecret(presented: string | undefined, expected: string): boolean {
  return sameDigest(sha256(presented ?? ''), sha256(expected)) && presented !== undefined
}
