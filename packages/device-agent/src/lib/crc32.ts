import { crc32 } from 'node:zlib'

export { crc32 }

/** CRC-32 (IEEE) as 8 lowercase hex digits, the manifest's `system.crc32` spelling. */
export const crc32Hex = (bytes: Uint8Array): string => crc32(bytes).toString(16).padStart(8, '0')
