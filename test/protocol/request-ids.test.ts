import { describe, expect, it } from 'vitest'
import { RequestIds } from '@fleetgate/device-agent/protocol'

describe('link request ids', () => {
  it('are 11 base-36 digits, distinct and increasing, across the carry from the low digits', () => {
    const perHigh = 36 ** 5 - 36 ** 4
    const ids = new RequestIds(perHigh - 3)
    const seen = Array.from({ length: 8 }, () => ids.next())
    for (const id of seen) expect(id).toMatch(/^[0-9a-z]{11}$/)
    expect(new Set(seen).size).toBe(seen.length)
    expect([...seen].sort()).toEqual(seen)
    expect(seen.slice(1, 3)).toEqual(['100000zzzzy', '100000zzzzz'])
    expect(seen[3]).toBe('10000110000')
  })

  it('start at the same place on every link', () => {
    expect(new RequestIds().next()).toBe('10000010000')
    expect(new RequestIds().next()).toBe('10000010000')
  })
})
