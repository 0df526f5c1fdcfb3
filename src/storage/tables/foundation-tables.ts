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
  /** Hits of a shared rate limit (scope + key), counted by every instance. */
  rate_hits: {
    id: Generated<number>
    key: string
    /** Milliseconds since epoch. */
    at: number
  }
  /** Sessions ended by logout: their tokens are refused on every instance until `expires_at` (epoch ms), then the row is pruned. */
  revoked_sessions: {
    sid: string
    expires_at: number
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
