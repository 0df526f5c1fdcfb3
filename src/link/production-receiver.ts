import type { ProductionFrame } from '@fleetgate/device-agent/protocol'
import type { DeviceLink } from './device-link.js'

/** Takes the production frames of registered links (§16) and hears when a link closed. */
export interface ProductionReceiver {
  /** A well-formed production frame arrived on `link` (its events are still to be checked). */
  receive(link: DeviceLink, frame: ProductionFrame): void
  /** The device's current link closed (not one already replaced by a newer link): the machine is offline from now. */
  closed(link: DeviceLink): void
}
