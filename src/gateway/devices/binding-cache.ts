import type { BindingRemoval, BindingWatcher } from '../../link/bus/device-bus.js'

const DEFAULT_TTL_MS = 30_000
const DEFAULT_MAX_ENTRIES = 100_000

/**
 * Remembers which (user, device) bindings exist, so a forwarded request does not query the
 * database for its access check. Only existing bindings are remembered: a new binding needs no
 * invalidation, and a removal (unbind, forget) is announced to every instance over the device
 * bus, which calls `remove`. A lookup that raced with a removal is not stored (generation
 * check), and entries expire after `ttlMs` as a last resort should an announcement be lost.
 */
export class BindingCache implements BindingWatcher {
  private readonly bound = new Map<string, number>()
  private generation = 0
  private enabled = true

  constructor(
    private readonly ttlMs = DEFAULT_TTL_MS,
    private readonly maxEntries = DEFAULT_MAX_ENTRIES,
  ) {}

  /** True when the binding is remembered and fresh; false means "ask `isBound`", not "unbound". */
  knownBound(username: string, deviceId: string): boolean {
    const key = `${deviceId}\u0000${username}`
    const expires = this.enabled ? this.bound.get(key) : undefined
    if (expires === undefined) return false
    if (expires > Date.now()) return true
    this.bound.delete(key)
    return false
  }

  async isBound(username: string, deviceId: string, load: () => Promise<boolean>): Promise<boolean> {
    if (this.knownBound(username, deviceId)) return true
    const key = `${deviceId}\u0000${username}`
    const generation = this.generation
    const result = await load()
    if (result && this.enabled && generation === this.generation) {
      if (this.bound.size >= this.maxEntries) this.bound.delete(this.bound.keys().next().value!)
      this.bound.set(key, Date.now() + this.ttlMs)
    }
    return result
  }

  remove(removal: BindingRemoval): void {
    this.generation++
    if ('all' in removal) return this.bound.clear()
    if (removal.username !== undefined) return void this.bound.delete(`${removal.device_id}\u0000${removal.username}`)
    const prefix = `${removal.device_id}\u0000`
    for (const key of this.bound.keys()) if (key.startsWith(prefix)) this.bound.delete(key)
  }

  /** While removals may go unheard (the bus is disconnected), nothing is served from memory. */
  setEnabled(enabled: boolean): void {
    this.enabled = enabled
    this.remove({ all: true })
  }

  get size(): number {
    return this.enabled ? this.bound.size : 0
  }
}
