import { afterEach, describe, expect, it, vi } from 'vitest'
import type { DeviceLink } from '../../src/link/device-link.js'
import { LinkRegistry } from '../../src/link/link-registry.js'

/** Stands in for a link as far as the ping round sees it: its id and each visit of the round. */
function visitedLink(deviceId: string, visits: number[]) {
  return { deviceId, pingOrGiveUp: () => visits.push(Date.now()) } as unknown as DeviceLink
}

describe('the ping rounds of the link registry', () => {
  afterEach(() => vi.useRealTimers())

  it('visits every link once a period, spread over the period rather than all in one turn', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] })
    const registry = new LinkRegistry()
    const visits = new Map<string, number[]>()
    for (let i = 0; i < 400; i++) {
      const id = `pnp-${i}`
      visits.set(id, [])
      registry.add(visitedLink(id, visits.get(id)!))
    }
    const all = () => [...visits.values()].flat()
    registry.startPinging(1000)
    await vi.advanceTimersByTimeAsync(1000)
    // The first turn of a round visits one slice of the links, not all of them.
    const firstTurn = all().length
    expect(firstTurn).toBeGreaterThan(0)
    expect(firstTurn).toBeLessThanOrEqual(400 / 10)
    await vi.advanceTimersByTimeAsync(1000)
    expect([...visits.values()].every((times) => times.length === 1)).toBe(true)
    // Over many periods each link is visited about once a period, never twice in one.
    await vi.advanceTimersByTimeAsync(20_000)
    for (const times of visits.values()) {
      expect(times.length).toBeGreaterThanOrEqual(19)
      expect(times.length).toBeLessThanOrEqual(21)
      for (let k = 1; k < times.length; k++) expect(times[k]! - times[k - 1]!).toBeGreaterThanOrEqual(1000)
    }
    registry.stopPinging()
  })

  it('visits a link added during a round, and not a removed one', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] })
    const registry = new LinkRegistry()
    const early: number[] = []
    const removed: number[] = []
    const late: number[] = []
    registry.add(visitedLink('pnp-early', early))
    const gone = visitedLink('pnp-gone', removed)
    registry.add(gone)
    for (let i = 0; i < 100; i++) registry.add(visitedLink(`pnp-${i}`, []))
    registry.startPinging(1000)
    await vi.advanceTimersByTimeAsync(1000)
    registry.remove(gone)
    registry.add(visitedLink('pnp-late', late))
    // Still within the first round, which ends before the period does.
    await vi.advanceTimersByTimeAsync(900)
    expect(early).toHaveLength(1)
    expect(late).toHaveLength(1)
    expect(removed.length).toBeLessThanOrEqual(1)
    await vi.advanceTimersByTimeAsync(3000)
    expect(removed.length).toBeLessThanOrEqual(1)
    registry.stopPinging()
  })
})
