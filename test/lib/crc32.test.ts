import { randomBytes } from 'node:crypto'
import { crc32 as zlibCrc32 } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { crc32, crc32Hex, crc32Portable } from '@fleetgate/device-agent/lib'

describe('crc32', () => {
  it('gives the IEEE check value and 8 lowercase hex digits', () => {
    expect(crc32(Buffer.from('123456789'))).toBe(0xcbf43926)
    expect(crc32Hex(Buffer.from('123456789'))).toBe('cbf43926')
    expect(crc32Hex(Buffer.alloc(0))).toBe('00000000')
    expect(crc32Hex(Buffer.from('The quick brown fox jumps over the lazy dog'))).toBe('414fa339')
  })

  it('continues over chunks', () => {
    const bytes = randomBytes(10_000)
    expect(crc32(bytes.subarray(3_333), crc32(bytes.subarray(0, 3_333)))).toBe(crc32(bytes))
  })

  it('handles a 16 MiB image, agreeing with zlib', () => {
    const bytes = randomBytes(16 * 1024 * 1024)
    expect(crc32(bytes)).toBe(zlibCrc32(bytes))
  })

  it('has a portable fallback (for a Node 20 without zlib.crc32) that agrees with zlib, over chunks too', () => {
    const bytes = randomBytes(100_003)
    expect(crc32Portable(Buffer.from('123456789'))).toBe(0xcbf43926)
    expect(crc32Portable(Buffer.alloc(0))).toBe(0)
    expect(crc32Portable(bytes)).toBe(zlibCrc32(bytes))
    expect(crc32Portable(bytes.subarray(50_000), crc32Portable(bytes.subarray(0, 50_000)))).toBe(zlibCrc32(bytes))
  })
})
