import pino from 'pino'
import { describe, expect, it, vi } from 'vitest'
import { DeviceLink } from '../../src/link/device-link.js'
import type { AdmitVerdict, LinkClaim, LinkStore } from '../../src/link/link-store.js'
import type { RegisterFrame } from '@fleetgate/device-agent/protocol'
import { StatusWriter } from '../../src/link/status-writer.js'
import { databaseUnavailable } from '../../src/storage/unreachable-database.js'
import { detachedLinkMetrics, idleSocket } from '../helpers/detached-links.js'

/** A device registry that can be cut off from its database; records what it wrote. */
class UnreliableStore implements LinkStore {
  reachable = true
  readonly saved: string[][] = []
  readonly closes: string[] = []

  async admitAll(frames: readonly RegisterFrame[]): Promise<AdmitVerdict[]> {
    return frames.map(() => 'accepted')
  }
  async claimAll(claims: readonly LinkClaim[]): Promise<(number | undefined)[]> {
    return claims.map(() => 1)
  }
  async generations(): Promise<Map<string, number>> {
    return new Map()
  }
  async claimedWithin(): Promise<Map<string, number>> {
    return new Map()
  }
  async saveStatus(links: readonly DeviceLink[]): Promise<void> {
    this.check()
    this.saved.push(links.map((l) => l.deviceId))
  }
  async linksClosed(links: readonly DeviceLink[]): Promise<void> {
    this.check()
    this.closes.push(...links.map((l) => l.deviceId))
  }
  private check(): void {
    if (!this.reachable) throw databaseUnavailable(new Error('connect ECONNREFUSED'))
  }
}

const metrics = detachedLinkMetrics
const linkOf = (deviceId: string) => {
  const link = new DeviceLink({ linkId: `${deviceId}-link`, deviceId, hostname: 'h', ip: '127.0.0.1', version: '1' }, 1, idleSocket(), metrics)
  link.lastHeartbeat = Date.now() / 1000
  return link
}

describe('the link status writer while the database cannot be reached', () => {
  const log = pino({ level: 'silent' })

  it('writes the heartbeats of a failed flush with the next one', async () => {
    const store = new UnreliableStore()
    const writer = new StatusWriter(store, 60_000, log)
    writer.mark(linkOf('a'))
    writer.mark(linkOf('b'))
    store.reachable = false
    await writer.flush()
    expect(store.saved).toEqual([])
    store.reachable = true
    await writer.flush()
    expect(store.saved).toEqual([['a', 'b']])
    await writer.flush()
    expect(store.saved).toEqual([['a', 'b']])
    writer.stop()
  })

  it('writes the final state of a link that closed during the outage once the database is back, and only that', async () => {
    const store = new UnreliableStore()
    const writer = new StatusWriter(store, 60_000, log)
    const a = linkOf('a')
    writer.mark(a)
    store.reachable = false
    await writer.flush()
    await writer.closed(a)
    expect(writer.pendingCloses).toBe(1)
    store.reachable = true
    await writer.flush()
    // The heartbeat that failed is not written on its own: the close carries the last one.
    expect(store.saved).toEqual([])
    expect(store.closes).toEqual(['a'])
    expect(writer.pendingCloses).toBe(0)
    writer.stop()
  })

  it('drains at shutdown with one attempt per pending write, even while the database is down', async () => {
    const store = new UnreliableStore()
    const writer = new StatusWriter(store, 60_000, log)
    writer.mark(linkOf('a'))
    store.reachable = false
    await writer.closed(linkOf('b'))
    await writer.drain()
    expect([store.saved, store.closes, writer.pendingCloses]).toEqual([[], [], 1])
    writer.stop()
  })
})

describe('the link status writer while the database is slow', () => {
  it('starts no periodic flush while the previous one is still being written', async () => {
    vi.useFakeTimers()
    try {
      const store = new UnreliableStore()
      let release = () => undefined as void
      let calls = 0
      store.saveStatus = async () => {
        calls++
        await new Promise<void>((resolve) => (release = resolve))
      }
      const writer = new StatusWriter(store, 100, pino({ level: 'silent' }))
      writer.start()
      writer.mark(linkOf('a'))
      await vi.advanceTimersByTimeAsync(100)
      expect(calls).toBe(1)
      for (let i = 0; i < 10; i++) {
        writer.mark(linkOf(`b${i}`))
        await vi.advanceTimersByTimeAsync(100)
      }
      expect(calls).toBe(1)
      release()
      await vi.advanceTimersByTimeAsync(100)
      expect(calls).toBe(2)
      writer.stop()
      release()
    } finally {
      vi.useRealTimers()
    }
  })
})
