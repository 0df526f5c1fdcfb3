import type { RegisterFrame } from '../protocol/frames.js'
import type { DeviceLink } from './device-link.js'

/** Why a register frame was refused, or `accepted`. */
export type AdmitVerdict = 'accepted' | 'wrong_key' | 'enroll_refused'

/** What the device link needs from the device registry (implemented by the gateway's repository). */
export interface LinkStore {
  /**
   * Trust on first use: an id never seen is recorded with a hash of its key (when the enroll
   * token, if any, matches); a known id must present the same key.
   */
  admit(frame: RegisterFrame, enrollToken: string | undefined): Promise<AdmitVerdict>
  /** Records the link's identity, connect time and holding instance. */
  linkOpened(link: DeviceLink, instanceId: string): Promise<void>
  /** Writes the latest heartbeat of each link (the caller throttles). */
  saveStatus(links: readonly DeviceLink[]): Promise<void>
  /** Writes the last heartbeat and clears the holder, unless a newer link took the record. */
  linkClosed(link: DeviceLink): Promise<void>
}
