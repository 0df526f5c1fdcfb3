import { describe, expect, it } from 'vitest'
import { clientFrameBytes } from '../../src/link/frame-byte-limit.js'

describe('frame byte limit', () => {
  it('counts a client frame as its payload, its length field and the 4-byte mask (RFC 6455 §5.2)', () => {
    expect(clientFrameBytes(0)).toBe(6)
    expect(clientFrameBytes(125)).toBe(131)
    expect(clientFrameBytes(126)).toBe(134)
    expect(clientFrameBytes(65_535)).toBe(65_543)
    expect(clientFrameBytes(65_536)).toBe(65_550)
  })
})
