import * as zlib from 'node:zlib'

type Crc32 = (bytes: Uint8Array, value?: number) => number

let table: Uint32Array | undefined

/**
 * CRC-32 (IEEE) computed in JavaScript, for a Node without `zlib.crc32` (before 20.15 and 22.2).
 * `value`: the CRC of the bytes before these, to continue over chunks.
 */
export const crc32Portable: Crc32 = (bytes, value = 0) => {
  if (!table) {
    table = new Uint32Array(256)
    for (let n = 0; n < 256; n++) {
      let c = n
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
      table[n] = c >>> 0
    }
  }
  let crc = ~value >>> 0
  for (let i = 0; i < bytes.length; i++) crc = table[(crc ^ bytes[i]) & 0xff] ^ (crc >>> 8)
  return ~crc >>> 0
}

/** CRC-32 (IEEE): Node's own (zlib) where it has one, else {@link crc32Portable}. */
export const crc32: Crc32 = (zlib as { crc32?: Crc32 }).crc32 ?? crc32Portable

/** CRC-32 (IEEE) as 8 lowercase hex digits, the manifest's `system.crc32` spelling. */
export const crc32Hex = (bytes: Uint8Array): string => crc32(bytes).toString(16).padStart(8, '0')
