import type { BindingRemoval, BindingWatcher } from '../../link/bus/binding-removals.js'
import { isDependencyUnavailable } from '../../storage/unreachable-database.js'

const DEFAULT_TTL_MS = 30_000
const DEFAULT_MAX_ENTRIES = 100_000

/**
 * Remembers which (user, device) bindings exist, so a forwarded request does not query the
 * database for its access check. Only existing bindings are remembered: a new binding needs no
 * invalidation, and a removal (unbind, forget) is announced to every instance over the
 * binding-removal channel (`BindingRemovals`), which calls `remove`. A lookup that raced with a
 * removal is not stored (generation check), and entries expire after `ttlMs` as a last resort
 * should an announcement be lost.
 *
 * While the database cannot be reached, an expired entry still answers: no binding can be
 * removed meanwhile (removing one is a database write, announced when done), so it is the best
 * answer there is, and requests for a linked device keep working through an outage of any length.
 */
export class BindingCache implements BindingWatcher {
  /** Device id → username → expiry (ms). By device, so a lookup builds no key and a device's removal is one delete. */
  private readonly bound = new Map<string, Map<string, number>>()
  private entries = 0
  private generation = 0
  private enabled = true

  constructor(
    private readonly ttlMs = DEFAULT_TTL_MS,
    private readonly maxEntries = DEFAULT_MAX_ENTRIES,
  ) {}

  /** True when the binding is remembered and fresh; false means "ask `isBound`", not "unbound". */
  knownBound(username: string, deviceId: string): boolean {
    const expires = this.expiry(username, deviceId)
    return expires !== undefined && expires > Date.now()
  }

  async isBound(username: string, deviceId: string, load: () => Promise<boolean>): Promise<boolean> {
    if (this.knownBound(username, deviceId)) return true
    const generation = this.generation
    let result: boolean
    try {
      result = await load()
    } catch (err) {
      // Remembered (though expired) and not removed since: still bound, as far as anyone can tell.
      if (isDependencyUnavailable(err) && generation === this.generation && this.expiry(username, deviceId) !== undefined) return true
      throw err
    }
    if (result && this.enabled && generation === this.generation) this.remember(deviceId, username)
    else if (!result) this.forget(deviceId, username)
    return result
  }

  remove(removal: BindingRemoval): void {
    this.generation++
    if ('all' in removal) {
      this.bound.clear()
      this.entries = 0
      return
    }
    if (removal.username !== undefined) return this.forget(removal.device_id, removal.username)
    this.entries -= this.bound.get(removal.device_id)?.size ?? 0
    this.bound.delete(removal.device_id)
  }

  /** While removals may go unheard (the bus is disconnected), nothing is served from memory. */
  setEnabled(enabled: boolean): void {
    this.enabled = enabled
    this.remove({ all: true })
  }

  get size(): number {
    return this.enabled ? this.entries : 0
  }

  /** When the remembered binding expires (possibly in the past); undefined when not remembered or while disabled. */
  private expiry(username: string, deviceId: string): number | undefined {
    return this.enabled ? this.bound.get(deviceId)?.get(username) : undefined
  }

  private remember(deviceId: string, username: string): void {
    let users = this.bound.get(deviceId)
    if (users?.has(username) !== true) {
      // Bounded: the entry remembered first goes (the first user of the first device).
      if (this.entries >= this.maxEntries) {
        const [oldestDevice, oldestUsers] = this.bound.entries().next().value!
        this.forget(oldestDevice, oldestUsers.keys().next().value!)
        users = this.bound.get(deviceId)
      }
      if (!users) this.bound.set(deviceId, (users = new Map()))
      this.entries++
    }
    users.set(username, Date.now() + this.ttlMs)
  }

  private forget(deviceId: string, username: string): void {
    const users = this.bound.get(deviceId)
    if (!users?.delete(username)) return
    this.entries--
    if (users.size === 0) this.bound.delete(deviceId)
  }
}
