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
  /** A registration whose claim the database has not decided within this long is refused (1011). */
  claimTimeoutMs?: number
  /** How often each instance reads the claims made since its last look (backstop for a lost takeover notice). */
  fenceCheckMs?: number
}

export const LINK_DEFAULTS: Required<DeviceLinkOptions> = {
  registerTimeoutMs: 10_000,
  pingIntervalMs: 15_000,
  statusFlushMs: 5_000,
  shutdownGraceMs: 5_000,
  maxAwaitingRegister: 1_000,
  claimTimeoutMs: 5_000,
  fenceCheckMs: 10_000,
}
