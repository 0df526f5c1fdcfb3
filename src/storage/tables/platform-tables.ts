import type { Generated } from 'kysely'

/**
 * Tables owned by the platform capability. Every time value is integer milliseconds since
 * epoch (`bigint` columns); JSON values are stored as text; booleans as integers.
 */
export interface PlatformTables {
  platform_devices: {
    device_id: string
    model: string | null
    firmware_version: string | null
    ip: string | null
    /** SHA-256 (hex) of the device token; null until `device/add` or a rotation issues one. */
    token_hash: string | null
    /** The expression last set from the console. */
    expression: string | null
    uptime_s: number | null
    rssi: number | null
    created_at: number
    /** Time of the last heartbeat. */
    last_online_at: number | null
  }
  /** One series per (device, key), with its newest point (device detail, key list). */
  platform_telemetry_series: {
    series_id: Generated<number>
    device_id: string
    key: string
    last_ts: number
    /** JSON text of a number, boolean or string. */
    last_value: string
  }
  /** One row per (record, key): a point of one series. No key: pruning names points by `Storage.rowId`. */
  platform_telemetry: {
    series_id: number
    ts: number
    /** JSON text of a number, boolean or string. */
    value: string
  }
  /**
   * SQLite only: the time bounds of the points per range of row ids, in place of an index on
   * time (see `point-ranges.ts`). `range_id` is a point's row id divided by `RANGE_ROWS`.
   */
  platform_telemetry_ranges: {
    range_id: number
    min_ts: number
    max_ts: number
  }
  platform_commands: {
    id: Generated<number>
    device_id: string
    action: string
    /** JSON text. */
    params: string
    /** 'pending' | 'delivered' | 'done' | 'failed' | 'expired' */
    status: string
    /** Deliveries so far. */
    attempts: number
    created_at: number
    /** Time of the last delivery. */
    delivered_at: number | null
    /** Time of the first acknowledgement; later ones are duplicates. */
    acked_at: number | null
    /** JSON text of the device's result. */
    result: string | null
    error: string | null
  }
  /**
   * Commands in each finished state (done, failed, expired), spread over a few rows per state
   * (`shard` = command id mod COMMAND_TALLY_SHARDS) so that concurrent acks seldom wait on one
   * row: the summary sums them instead of counting the whole history.
   */
  platform_command_tallies: {
    status: string
    shard: number
    n: number
  }
  /**
   * Rows the summary counts over its last 24 h (kind `telemetry`: points; `device_errors`: device
   * log entries of level error), per minute (`bucket`, its first millisecond) and `shard` (any
   * of a few rows per minute, so concurrent writers seldom wait on one): see `window-tallies.ts`.
   */
  platform_window_tallies: {
    kind: string
    bucket: number
    shard: number
    n: number
  }
  /** Platform devices, as rows per shard to sum (the summary's total, not a count of the table). */
  platform_device_tallies: {
    shard: number
    n: number
  }
  platform_configs: {
    device_id: string
    /** JSON text of an object. */
    config: string
    version: number
    updated_at: number
  }
  platform_logs: {
    id: Generated<number>
    /** 'device' | 'operation' */
    source: string
    device_id: string | null
    /** 'debug' | 'info' | 'warn' | 'error' */
    level: string
    tag: string | null
    message: string
    ts: number
  }
  /** The one live binding code of a device. */
  platform_bind_codes: {
    device_id: string
    code: string
    expires_at: number
  }
  platform_bindings: {
    device_id: string
    user_id: string
    bound_at: number
  }
}
