import type { AppDeps } from '../app-deps.js'
import type { AuthUser } from '../auth/user-directory.js'
import type { LoginThrottle } from '../auth/login-throttle.js'
import type { BindingRemovals } from '../link/bus/binding-removals.js'
import type { DeviceRouting } from '../link/bus/device-bus.js'
import type { RequestUser } from '@fleetgate/device-agent/protocol'
import type { DeviceClient } from './device-client.js'
import type { BindingRepository } from './devices/binding-repository.js'
import type { DeviceAccess } from './devices/device-access.js'
import type { DeviceRepository } from './devices/device-repository.js'
import type { LabelRepository } from './labels/label-repository.js'

/** What the gateway's route plugins share, built once in `gatewayPlugin`. */
export interface GatewayContext {
  deps: AppDeps
  devices: DeviceRepository
  bindings: BindingRepository
  labels: LabelRepository
  access: DeviceAccess
  bus: DeviceRouting
  /** Announce every binding removal here, so no instance's binding cache keeps it. */
  bindingRemovals: BindingRemovals
  client: DeviceClient
  /** Failed device logins per (client address, device-side username); separate from gateway logins. */
  deviceLoginThrottle: LoginThrottle
}

const requestUsers = new WeakMap<AuthUser, RequestUser>()

/** The user a request frame names: who the device is working for. One object per user, so its JSON is written once. */
export function requestUser(user: AuthUser): RequestUser {
  let named = requestUsers.get(user)
  if (named === undefined) requestUsers.set(user, (named = Object.freeze({ id: user.id, username: user.username, role: user.role })))
  return named
}
