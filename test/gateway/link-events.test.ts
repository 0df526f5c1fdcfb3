import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { DeviceEvent, DeviceStatusEvent } from '../../src/gateway/devices/device-events.js'
import { LinkEvents } from '../../src/gateway/devices/link-events.js'
import { DeviceLink } from '../../src/link/device-link.js'
import { LinkRegistry } from '../../src/link/link-registry.js'
import { detachedLinkMetrics, idleSocket } from '../helpers/detached-links.js'

const ALIVE_MS = 60_000
const T0 = Date.UTC(2026, 10, 30, 12)
const metrics = detachedLinkMetrics

describe('device events of the links here: alive loss found by the sweep', () => {
  let registry: LinkRegistry
  let published: (DeviceEvent | DeviceStatusEvent)[]
  let events: LinkEvents

  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(T0)
    registry = new LinkRegistry()
    published = []
    events = new LinkEvents({ publish: (event) => void published.push(event) }, registry, ALIVE_MS, 1_000)
  })
  afterEach(() => {
    events.stop()
    vi.useRealTimers()
  })

  const at = (seconds: number) => vi.setSystemTime(T0 + seconds * 1000)
  /** A link whose `register` frame arrived now, registered `after` seconds later (as the link server's join does). */
  const register = (deviceId: string, after = 0) => {
    const link = new DeviceLink({ linkId: `${deviceId}-${Date.now()}`, deviceId, hostname: 'h', ip: '127.0.0.1', version: '1' }, 1, idleSocket(), metrics)
    at((Date.now() - T0) / 1000 + after)
    const replaced = registry.add(link)
    events.registered(link, replaced !== undefined)
    return link
  }
  const heartbeat = (link: DeviceLink) => {
    link.receive({ type: 'heartbeat', status: { state: 'idle' } })
    events.frame(link, 'heartbeat')
  }
  const reasons = () => published.filter((e): e is DeviceEvent => e.kind === 'device').map((e) => `${e.data.device_id} ${e.data.reason}`)

  it('announces each silent link once, and only the silent ones, whatever order they were heard in', () => {
    const links = ['a', 'b', 'c', 'd', 'e'].map((id) => register(id))
    at(30)
    for (const link of [links[0]!, links[2]!, links[4]!]) heartbeat(link)
    published = []
    at(61)
    events.sweep()
    expect(reasons()).toEqual(['b not_alive', 'd not_alive'])
    at(89)
    events.sweep()
    expect(reasons()).toEqual(['b not_alive', 'd not_alive'])
    at(91)
    events.sweep()
    events.sweep()
    expect(reasons()).toEqual(['b not_alive', 'd not_alive', 'a not_alive', 'c not_alive', 'e not_alive'])
    heartbeat(links[1]!)
    at(200)
    events.sweep()
    expect(reasons().slice(5)).toEqual(['b alive', 'b not_alive'])
  })

  it('finds a link silent since its register frame, at the latest as long after as its registration took', () => {
    const early = register('early')
    at(1)
    // Its register frame came at 1 s; other links are heard while its registration takes 4 s.
    const slow = new DeviceLink({ linkId: 'slow-1', deviceId: 'slow', hostname: 'h', ip: '127.0.0.1', version: '1' }, 1, idleSocket(), metrics)
    at(3)
    heartbeat(early)
    at(5)
    registry.add(slow)
    events.registered(slow, false)
    published = []
    at(62)
    events.sweep()
    expect(reasons()).not.toContain('early not_alive')
    at(64)
    events.sweep()
    expect(reasons()).toEqual(['early not_alive', 'slow not_alive'])
  })

  it('says nothing of a link taken over by another instance (gone from the registry without a close here)', () => {
    const link = register('moved')
    const stays = register('stays')
    registry.remove(link)
    published = []
    at(61)
    events.sweep()
    expect(reasons()).toEqual(['stays not_alive'])
    heartbeat(link)
    events.sweep()
    expect(reasons()).toEqual(['stays not_alive'])
  })

  it('hears the current link of a device, not the one it replaced', () => {
    const first = register('twice')
    at(10)
    const second = register('twice')
    expect(reasons()).toEqual(['twice registered', 'twice taken_over'])
    at(50)
    heartbeat(first)
    at(71)
    events.sweep()
    expect(reasons().slice(2)).toEqual(['twice not_alive'])
    heartbeat(first)
    expect(reasons().slice(3)).toEqual([])
    heartbeat(second)
    expect(reasons().slice(3)).toEqual(['twice alive'])
  })

  it('announces a closed link once, and no longer sweeps it', () => {
    const link = register('closing')
    events.closed(link)
    registry.remove(link)
    at(61)
    events.sweep()
    expect(reasons()).toEqual(['closing registered', 'closing closed'])
  })
})
