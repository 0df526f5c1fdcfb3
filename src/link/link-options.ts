import { readFileSync } from 'node:fs'

/**
 * Timings and limits of the device link. Only `buildApp` options set them (tests shorten them);
 * the contract fixes the defaults, so they are not environment variables, except the
 * per-address awaiting limit (machines behind one NAT share an address).
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
  /**
   * Sockets from one client address that may wait for their register frame at once (default
   * 100; `DEVICE_LINK_MAX_AWAITING_PER_ADDRESS`); one more is closed with 1013. The address is
   * the peer's, or the one a trusted balancer forwards (TRUST_PROXY).
   */
  maxAwaitingPerAddress?: number
  /** A registration whose claim the database has not decided within this long is refused (1011). */
  claimTimeoutMs?: number
  /** How often each instance reads the claims made since its last look (backstop for a lost takeover notice). */
  fenceCheckMs?: number
  /**
   * Links (registered or awaiting registration) this instance holds at most; one more is closed
   * at once with 1013. Default: the open-file limit less a reserve (see `linkCapacity`).
   */
  maxLinks?: number
}

/**
 * Descriptors kept for everything but links: the database pool, NATS, HTTP clients and event
 * streams. An instance out of descriptors accepts no connection at all, so past the capacity
 * a link is refused (the machine tries another instance) and the API stays reachable.
 */
export const RESERVED_DESCRIPTORS = 256

/** The link capacity for a process whose /proc/<pid>/limits reads `limits`: unbounded when no limit is found. */
export function linkCapacity(limits: string | undefined, reserve = RESERVED_DESCRIPTORS): number {
  const soft = /^Max open files\s+(\d+)/m.exec(limits ?? '')?.[1]
  return soft === undefined ? Infinity : Math.max(1, Number(soft) - reserve)
}

function ownLimits(): string | undefined {
  try {
    return readFileSync('/proc/self/limits', 'utf8')
  } catch {
    return undefined // not Linux: no capacity derived
  }
}

/** The defaults, with the capacity read from this process's open-file limit when asked (not at import). */
export function linkDefaults(): Required<DeviceLinkOptions> {
  return {
    registerTimeoutMs: 10_000,
    pingIntervalMs: 15_000,
    statusFlushMs: 5_000,
    shutdownGraceMs: 5_000,
    maxAwaitingRegister: 1_000,
    maxAwaitingPerAddress: 100,
    claimTimeoutMs: 5_000,
    fenceCheckMs: 10_000,
    maxLinks: linkCapacity(ownLimits()),
  }
}
