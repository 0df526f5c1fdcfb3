import type { RegisterFrame } from '@fleetgate/device-agent/protocol'
import type { DeviceLink, LinkIdentity } from './device-link.js'

/** Why a register frame was refused, or `accepted`. */
export type AdmitVerdict = 'accepted' | 'wrong_key' | 'enroll_refused'

/** A link asking to hold its device's record. */
export interface LinkClaim {
  identity: LinkIdentity
  connectTime: number
}

/**
 * What the device link needs from the device registry (implemented by the gateway's repository).
 * Registrations come in batches (a fleet re-links all at once): each answer is at its frame's
 * or claim's position.
 */
export interface LinkStore {
  /**
   * Trust on first use: an id never seen is recorded with a hash of its key (when the enroll
   * token, if any, matches); a known id must present the same key.
   */
  admitAll(frames: readonly RegisterFrame[], enrollToken: string | undefined): Promise<AdmitVerdict[]>
  /**
   * Claims each device's link for its connection, atomically per device: bumps the device's
   * fencing generation and records the link's identity, connect time and holding instance. The
   * same device twice is claimed twice, in order. Answers the new generation (the highest
   * generation holds the link), or undefined when the device record no longer exists. A claim
   * is written before `deadline` (`performance.now()` ms) or never: one its registration gave up
   * on must not commit later (it would fence the device's live link with no link behind it).
   */
  claimAll(claims: readonly LinkClaim[], instanceId: string, deadline?: number): Promise<(number | undefined)[]>
  /** The current fencing generation of each given device (absent: no record). */
  generations(deviceIds: readonly string[]): Promise<Map<string, number>>
  /**
   * The current fencing generation of every device whose link was claimed in the last `seconds`,
   * by the database's clock (claims are stamped with it, whichever instance made them), unless
   * its record still names `holder` as the instance holding its link.
   */
  claimedWithin(seconds: number, holder: string): Promise<Map<string, number>>
  /** Writes the latest heartbeat of each link (the caller throttles). */
  saveStatus(links: readonly DeviceLink[]): Promise<void>
  /** Writes each link's last heartbeat and clears the holder, unless a newer link took the record. */
  linksClosed(links: readonly DeviceLink[]): Promise<void>
}
