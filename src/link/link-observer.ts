import type { DeviceLink } from './device-link.js'

/** Told about a link's life by the link server (the gateway's `LinkEvents` turns it into `device` and `device-status` events). */
export interface LinkObserver {
  /** The link registered; `tookOver`: it replaced an open link of the same device on this instance. */
  registered(link: DeviceLink, tookOver: boolean): void
  /** The device's current link closed (not one already replaced by a newer link). */
  closed(link: DeviceLink): void
  /** A JSON frame arrived on a registered link. */
  frame(link: DeviceLink, type: string): void
}
