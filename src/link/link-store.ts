import type { RegisterFrame } from '../protocol/frames.js'
import type { DeviceLink, LinkIdentity } from './device-link.js'

/** Why a register frame was refused, or `accepted`. */
export type AdmitVerdict = 'accepted' | 'wrong_key' | 'enroll_refused'

/** What the device link needs from the device registry (implemented by the gateway's repository). */
export interface LinkStore {
  /**
   * Trust on first use: an id never seen is recorded with a hash of its key (when the enroll
   * token, if any, matches); a known id must present the same key.
   */
  admit(frame: RegisterFrame, enrollToken: string | undefined): Promise<AdmitVerdict>
  /**
   * Claims the device's link for this connection, in one atomic statement: bumps the device's
   * fencing generation and records the link's identity, connect time and holding instance.
   * Resolves with the new generation (the highest generation holds the link), or undefined when
   * the device record no longer exists.
   */
  claim(identity: LinkIdentity, connectTime: number, instanceId: string): Promise<number | undefined>
  /** The current fencing generation of each given device (absent: no record). */
  generations(deviceIds: readonly string[]): Promise<Map<string, number>>
  /** The current fencing generation of every device whose link was claimed at or after `since` (seconds). */
  claimedSince(since: number): Promise<Map<string, number>>
  /** Writes the latest heartbeat of each link (the caller throttles). */
  saveStatus(links: readonly DeviceLink[]): Promise<void>
  /** Writes the last heartbeat and clears the holder, unless a newer link took the record. */
  linkClosed(link: DeviceLink): Promise<void>
}
