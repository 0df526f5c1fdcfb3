import type { Generated } from 'kysely'

/** Settings (generated secrets), database users (mini-program) and the audit log. */
export interface FoundationTables {
  settings: { key: string; value: string }
  users: {
    id: string
    username: string
    display_name: string
    role: string
    avatar_url: string | null
    provider: string | null
    /** Seconds since epoch, fractional. */
    created_at: number
    updated_at: number
  }
  /** Login attempts per (scope, client address, username) in the current window, for throttling across instances. */
  login_counters: {
    key: string
    failures: number
    /** Milliseconds since epoch: the window's first counted attempt. */
    window_start: number
  }
  audit_log: {
    id: Generated<number>
    /** Seconds since epoch, fractional. */
    at: number
    actor: string
    action: string
    release_id: string | null
    device_id: string | null
    outcome: string
    /** JSON text. */
    detail: string
  }
}
