import { isPlainObject } from '@fleetgate/device-agent/lib'
import { sql, type RawBuilder } from 'kysely'
import type { Dialect } from '../../../storage/storage.js'

/**
 * `@firmware` is the last heartbeat's `status.firmware` when that is a JSON string, read from
 * `devices.last_status` (JSON text the gateway wrote with JSON.stringify). This file holds the
 * rule twice, for a row in memory and in SQL, and the two must agree.
 *
 * PostgreSQL refuses to read JSON holding the escape of U+0000 or of a lone surrogate (anywhere
 * in the text, not only in `firmware`), and one such status would fail every `@firmware`
 * query. A status with such an escape therefore has no firmware, on both engines. The test is on
 * the text, so an escaped backslash followed by `u0000` counts as well: harmless, and the same
 * everywhere.
 */
const UNREADABLE_ESCAPE = /\\u(?:0000|[dD][89abAB])/

export function reportedFirmware(lastStatus: string): string | undefined {
  if (UNREADABLE_ESCAPE.test(lastStatus)) return undefined
  let status: unknown
  try {
    status = JSON.parse(lastStatus)
  } catch {
    return undefined
  }
  if (!isPlainObject(status)) return undefined
  return typeof status.firmware === 'string' ? status.firmware : undefined
}

/** The same as SQL over `devices.last_status`: text, or null when there is no firmware. */
export function reportedFirmwareSql(dialect: Dialect): RawBuilder<string | null> {
  const status = sql.ref('devices.last_status')
  // CASE, not AND: both engines evaluate a CASE's branches in order, so the guards run before the JSON is read.
  if (dialect === 'postgres') {
    // `json`, not `jsonb`: the text is parsed for one field, never converted; a duplicate key gives the last value, as JSON.parse does.
    return sql<string | null>`(case
      when ${status} ~ ${UNREADABLE_ESCAPE.source} then null
      when json_typeof(cast(${status} as json) -> 'firmware') = 'string' then cast(${status} as json) ->> 'firmware'
    end)`
  }
  return sql<string | null>`(case
    when not json_valid(${status}) then null
    when ${status} glob '*\\u0000*' or ${status} glob '*\\u[dD][89abAB]*' then null
    when json_type(${status}, '$.firmware') = 'text' then json_extract(${status}, '$.firmware')
  end)`
}
