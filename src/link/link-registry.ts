import type { DeviceLink } from './device-link.js'

/** Slices of a ping round: the links are visited over the period in this many turns. */
const PING_SLICES = 20

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
   * unanswered is terminated. One timer for all links keeps a large fleet cheap, and it visits
   * them in slices spread over the period: 4,000 pings written in one turn held an instance's
   * event loop for most of a second (`npm run bench -- fleet`), delaying every request under way.
   * A round starts at most once per period, so each link is visited once per period.
   */
  startPinging(intervalMs: number): void {
    let round: Iterator<DeviceLink> | undefined
    let roundStartedAt = Date.now()
    let perSlice = 0
    this.pinger = setInterval(() => {
      const now = Date.now()
      if (!round) {
        if (now - roundStartedAt < intervalMs) return
        round = this.links.values()
        roundStartedAt = now
        perSlice = Math.ceil(this.links.size / PING_SLICES)
      }
      const heardSince = now - intervalMs
      for (let visited = 0; visited < perSlice; visited++) {
        const next = round.next()
        if (next.done) return void (round = undefined)
        next.value.pingOrGiveUp(heardSince)
      }
      if (perSlice === 0) round = undefined
    }, Math.max(1, Math.floor(intervalMs / PING_SLICES)))
    this.pinger.unref()
  }

  stopPinging(): void {
    clearInterval(this.pinger)
  }
}
