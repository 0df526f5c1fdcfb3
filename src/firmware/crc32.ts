/** Reflected IEEE 802.3 polynomial, as used by zlib, PNG and `crc32` tools. */
const POLYNOMIAL = 0xedb88320

const TABLE = (() => {
  const table = new Int32Array(256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? POLYNOMIAL ^ (c >>> 1) : c >>> 1
    table[n] = c
  }
  return table
})()

/**
 * CRC-32 (IEEE) of `bytes`, as an unsigned 32-bit number. Pass a previous result as
 * `crc` to continue over a following chunk.
 */
export function crc32(bytes: Uint8Array, crc = 0): number {
  let c = ~crc
  for (let i = 0; i < bytes.length; i++) c = TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8)
  return ~c >>> 0
}

/** CRC-32 (IEEE) as 8 lowercase hex digits, the manifest's `system.crc32` spelling. */
export const crc32Hex = (bytes: Uint8Array): string => crc32(bytes).toString(16).padStart(8, '0')
