import type { DeviceLink } from './device-link.js'

/** The registered links of this instance, one per device id, and their ping/pong watch. */
export class LinkRegistry {
  private readonly links = new Map<string, DeviceLink>()
  private pinger: NodeJS.Timeout | undefined

  get size(): number {
    return this.links.size
  }

  get(deviceId: string): DeviceLink | undefined {
    return this.links.get(deviceId)
  }

  all(): DeviceLink[] {
    return [...this.links.values()]
  }

  /** How many links here are alive (a frame within `aliveMs`) for devices whose id starts with `prefix`. */
  countAlive(aliveMs: number, prefix = ''): number {
    let alive = 0
    for (const link of this.links.values()) if (link.deviceId.startsWith(prefix) && link.isAlive(aliveMs)) alive++
    return alive
  }

  /** Adds a link; returns the one it replaces (the caller closes it with 4409). */
  add(link: DeviceLink): DeviceLink | undefined {
    const previous = this.links.get(link.deviceId)
    this.links.set(link.deviceId, link)
    return previous === link ? undefined : previous
  }

  /** Removes the link if it is still the device's current one. */
  remove(link: DeviceLink): boolean {
    if (this.links.get(link.deviceId) !== link) return false
    this.links.delete(link.deviceId)
    return true
  }

  inFlight(): number {
    let total = 0
    for (const link of this.links.values()) total += link.inFlight
    return total
  }

  /**
   * Pings each period every link not heard from during it; a link that left two pings in a row
   * unanswered is terminated. One timer for all links keeps a large fleet cheap.
   */
  startPinging(intervalMs: number): void {
    this.pinger = setInterval(() => {
      const heardSince = Date.now() - intervalMs
      for (const link of this.links.values()) link.pingOrGiveUp(heardSince)
    }, intervalMs)
    this.pinger.unref()
  }

  stopPinging(): void {
    clearInterval(this.pinger)
  }
}
