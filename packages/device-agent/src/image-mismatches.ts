import { createHash } from 'node:crypto'
import { crc32Hex } from './lib/crc32.js'

export interface ImageDigests {
  size: number
  /** Hex, any case. */
  sha256: string
  /** 8 hex digits, any case, `0x` allowed. */
  crc32: string
}

/** What differs between an image and the size and digests it was offered with; empty when it matches. */
export function imageMismatches(image: Uint8Array, expected: ImageDigests): string[] {
  const found: string[] = []
  if (image.length !== expected.size) found.push(`size is ${image.length} bytes, expected ${expected.size}`)
  const sha256 = createHash('sha256').update(image).digest('hex')
  if (sha256 !== expected.sha256.toLowerCase()) found.push(`sha256 is ${sha256}, expected ${expected.sha256}`)
  const crc32 = crc32Hex(image)
  if (crc32 !== expected.crc32.toLowerCase().replace(/^0x/, '')) found.push(`crc32 is ${crc32}, expected ${expected.crc32}`)
  return found
}
