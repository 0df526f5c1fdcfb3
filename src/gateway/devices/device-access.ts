import { isAdmin } from '../../auth/authenticator.js'
import type { AuthUser } from '../../auth/user-directory.js'
import { notFound } from '../../errors.js'
import type { BindingCache } from './binding-cache.js'
import type { BindingRepository } from './binding-repository.js'
import type { DeviceRepository, DeviceRow } from './device-repository.js'

const hidden = (deviceId: string) => notFound(`No device ${deviceId}`)

/**
 * Administrators see every device; other users only devices bound to them. For any other id
 * the answer is 404, the same as for an id that does not exist.
 */
export class DeviceAccess {
  constructor(
    private readonly devices: DeviceRepository,
    private readonly bindings: BindingRepository,
    private readonly cache: BindingCache,
  ) {}

  /** Visible for certain, decided from memory (an administrator, a remembered binding); false: ask `assertVisible`. */
  knownVisible(user: AuthUser, deviceId: string): boolean {
    return isAdmin(user) || this.cache.knownBound(user.username, deviceId)
  }

  async assertVisible(user: AuthUser, deviceId: string): Promise<void> {
    if (isAdmin(user)) return
    const bound = await this.cache.isBound(user.username, deviceId, () => this.bindings.isBound(user.username, deviceId))
    if (!bound) throw hidden(deviceId)
  }

  /** The stored record of a device the user may see, else 404. */
  async visibleRow(user: AuthUser, deviceId: string): Promise<DeviceRow> {
    await this.assertVisible(user, deviceId)
    const row = await this.devices.find(deviceId)
    if (!row) throw hidden(deviceId)
    return row
  }
}
