/** Size and count limits of the device link (contract §4), shared by the gateway and the device agent. */

/** Largest frame a device may send; the gateway closes the link with 1009 beyond. */
export const MAX_FRAME_BYTES = 16 * 1024 * 1024
/** A frame before registration over this closes the link with 1009. */
export const MAX_UNREGISTERED_FRAME_BYTES = 64 * 1024
/** A heartbeat whose `status` is over this much JSON closes the link with 4400. */
export const MAX_STATUS_BYTES = 64 * 1024
/** At most this many requests in flight per device; beyond, 503 without forwarding. */
export const MAX_IN_FLIGHT = 64
