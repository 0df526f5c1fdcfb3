/**
 * Timings of the device link. Only `buildApp` options set them (tests shorten them); the
 * contract fixes the defaults, so they are not environment variables.
 */
export interface DeviceLinkOptions {
  /** A register frame must arrive this long after the upgrade (contract: 10 s), else 4408. */
  registerTimeoutMs?: number
  /** WebSocket ping period; a link missing two pongs in a row is closed. */
  pingIntervalMs?: number
  /** Heartbeats reach the database at most this often per device. */
  statusFlushMs?: number
  /** On shutdown, how long in-flight device requests may still finish before links close. */
  shutdownGraceMs?: number
  /** Sockets that may wait for their register frame at once (contract: 1,000); one more is closed with 1013. */
  maxAwaitingRegister?: number
}

export const LINK_DEFAULTS: Required<DeviceLinkOptions> = {
  registerTimeoutMs: 10_000,
  pingIntervalMs: 15_000,
  statusFlushMs: 5_000,
  shutdownGraceMs: 5_000,
  maxAwaitingRegister: 1_000,
}

/** Contract §4: a frame before registration over this closes the link with 1009. */
export const MAX_UNREGISTERED_FRAME_BYTES = 64 * 1024
/** Contract §4: a heartbeat whose `status` is over this much JSON closes the link with 4400. */
export const MAX_STATUS_BYTES = 64 * 1024
/** WebSocket close code "try again later": too many sockets wait for registration. */
export const CLOSE_TRY_AGAIN_LATER = 1013

/** At most this many requests in flight per device (contract §4); beyond, 503 without forwarding. */
export const MAX_IN_FLIGHT = 64
