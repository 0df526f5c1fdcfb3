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
 * is found by a sweep.
 */
export class LinkEvents implements LinkObserver {
  /**
   * The links announced alive, in the order they were last heard: each frame moves its link to
   * the end (a `Set` of the links: 105–135 ns a frame at 16,700 links, a third of a `Map` by
   * device id; 40–60 ns a frame on top of what announcing alone cost). A sweep reads from the front and stops at the first link still alive, so it costs
   * the links that went silent, not every link each second (checking all of 16,700 links every
   * second took about 9 % of an idle instance's CPU in a profile of `bench -- fleet`). A link
   * enters at registration with the time of its `register` frame, which other links' frames may
   * have passed meanwhile: its silence is then found as late as its registration took. A link
   * replaced or taken over stays until it falls silent, then leaves without an event.
   */
  private readonly heard = new Set<DeviceLink>()
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
    this.heard.add(link)
    this.publish(link, true, true, tookOver ? 'taken_over' : 'registered')
  }

  /** The device's current link closed (not one already replaced by a newer link). */
  closed(link: DeviceLink): void {
    const slot = this.status.get(link.deviceId)
    if (slot?.link === link) {
      clearTimeout(slot.timer)
      this.status.delete(link.deviceId)
    }
    this.heard.delete(link)
    this.publish(link, false, false, 'closed')
  }

  /** A JSON frame arrived on a registered link (after `receive`). */
  frame(link: DeviceLink, type: string): void {
    if (this.heard.delete(link)) this.heard.add(link)
    else if (this.registry.get(link.deviceId) === link) {
      // Heard again after it was announced not alive.
      this.heard.add(link)
      this.publish(link, true, true, 'alive')
    }
    if (type === 'heartbeat') this.heartbeat(link)
  }

  /** Announces the links whose last frame is older than the alive window. */
  sweep(now = Date.now()): void {
    for (const link of this.heard) {
      if (link.isAlive(this.aliveMs, now)) return
      this.heard.delete(link)
      // A replaced link, or one taken over by another instance, left this registry with no close
      // announced here: the device's current link speaks for it.
      if (this.registry.get(link.deviceId) === link) this.publish(link, false, true, 'not_alive')
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
