import type { EventPublisher } from '../../events/event-bus.js'
import type { DeviceLink } from '../../link/device-link.js'
import type { LinkObserver } from '../../link/link-observer.js'
import type { LinkRegistry } from '../../link/link-registry.js'
import { nowSeconds } from '../../lib/time.js'
import type { DeviceEvent, DeviceStatusEvent } from './device-events.js'

interface StatusSlot {
  link: DeviceLink
  lastSentAt: number
  timer: NodeJS.Timeout | undefined
}

/**
 * Raises `device` and `device-status` for the links of this instance. A link lives on one
 * instance only, so each of its transitions is raised exactly once, by its holder; alive loss
 * is found by a sweep over this instance's links.
 */
export class LinkEvents implements LinkObserver {
  /** Links last announced alive. */
  private readonly announcedAlive = new WeakSet<DeviceLink>()
  private readonly status = new Map<string, StatusSlot>()
  private sweeper: NodeJS.Timeout | undefined

  constructor(
    private readonly bus: EventPublisher<DeviceEvent | DeviceStatusEvent>,
    private readonly registry: LinkRegistry,
    private readonly aliveMs: number,
    private readonly statusIntervalMs: number,
  ) {}

  /** The link registered; `tookOver`: it replaced an open link of the same device here. */
  registered(link: DeviceLink, tookOver: boolean): void {
    this.announcedAlive.add(link)
    this.publish(link, true, true, tookOver ? 'taken_over' : 'registered')
  }

  /** The device's current link closed (not one already replaced by a newer link). */
  closed(link: DeviceLink): void {
    const slot = this.status.get(link.deviceId)
    if (slot?.link === link) {
      clearTimeout(slot.timer)
      this.status.delete(link.deviceId)
    }
    this.announcedAlive.delete(link)
    this.publish(link, false, false, 'closed')
  }

  /** A JSON frame arrived on a registered link (after `receive`). */
  frame(link: DeviceLink, type: string): void {
    if (!this.announcedAlive.has(link)) {
      this.announcedAlive.add(link)
      this.publish(link, true, true, 'alive')
    }
    if (type === 'heartbeat') this.heartbeat(link)
  }

  /** Announces links whose last frame is older than the alive window. */
  sweep(now = Date.now()): void {
    for (const link of this.registry.all()) {
      if (this.announcedAlive.has(link) && !link.isAlive(this.aliveMs, now)) {
        this.announcedAlive.delete(link)
        this.publish(link, false, true, 'not_alive')
      }
    }
  }

  start(intervalMs: number): void {
    this.sweeper = setInterval(() => this.sweep(), intervalMs)
    this.sweeper.unref()
  }

  stop(): void {
    clearInterval(this.sweeper)
    for (const slot of this.status.values()) clearTimeout(slot.timer)
    this.status.clear()
  }

  /** `device-status` at most once per interval per device; the latest status is sent at the end of a busy interval. */
  private heartbeat(link: DeviceLink): void {
    const now = Date.now()
    let slot = this.status.get(link.deviceId)
    if (!slot) {
      slot = { link, lastSentAt: 0, timer: undefined }
      this.status.set(link.deviceId, slot)
    }
    slot.link = link
    if (slot.timer) return
    const wait = slot.lastSentAt + this.statusIntervalMs - now
    if (wait <= 0) return this.sendStatus(slot, now)
    const pending = slot
    pending.timer = setTimeout(() => {
      pending.timer = undefined
      if (this.status.get(pending.link.deviceId) === pending) this.sendStatus(pending, Date.now())
    }, wait)
    pending.timer.unref()
  }

  private sendStatus(slot: StatusSlot, now: number): void {
    slot.lastSentAt = now
    this.bus.publish({ kind: 'device-status', data: { device_id: slot.link.deviceId, status: slot.link.lastStatus, at: now / 1000 } })
  }

  private publish(link: DeviceLink, alive: boolean, registered: boolean, reason: DeviceEvent['data']['reason']): void {
    const { deviceId, version, ip } = link.identity
    this.bus.publish({
      kind: 'device',
      data: { device_id: deviceId, alive, registered, version, ip, last_heartbeat: link.lastHeartbeat, at: nowSeconds(), reason },
    })
  }
}
