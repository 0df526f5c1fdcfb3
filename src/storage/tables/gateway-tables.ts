import type { Generated } from 'kysely'

/** Tables owned by the gateway capability: the device registry and user-to-device bindings. */
export interface GatewayTables {
  devices: {
    device_id: string
    hostname: string
    ip: string
    version: string
    /** `sha256$<salt>$<digest>` of the device key; null after an administrator reset it. */
    key_hash: string | null
    /** JSON text: the last status object a heartbeat reported. */
    last_status: string
    /** Seconds since epoch, fractional. */
    connect_time: number | null
    last_heartbeat: number | null
    /** The instance holding the link, a hint for live queries; may be stale after a crash. */
    link_instance: string | null
    /** The link this row was last written by; a closing link clears only its own columns. */
    link_id: string | null
    /** Fencing generation: bumped by every claim of the link; the highest claim holds it. */
    link_generation: Generated<number>
    /** When the link was last claimed (seconds, the claiming instance's clock); the fence check reads the recent ones. */
    link_claimed_at: number | null
    created_at: number
    /** Rated placements per hour from the machine's latest `register` (§16); null when it named none. */
    rated_cph: number | null
  }
  /** A machine's labels (§15), one row per key; removed with the machine. */
  device_labels: {
    device_id: string
    key: string
    value: string
  }
  /** Running instances and their last sign of life (seconds): a silent one is presumed dead. */
  instances: {
    instance_id: string
    started_at: number
    last_seen: number
  }
  user_device_bindings: {
    id: Generated<number>
    username: string
    user_id: string
    device_id: string
    created_at: number
  }
}
