import { sql, type RawBuilder } from 'kysely'
import type { Db, Dialect } from './storage.js'

/**
 * The database's clock, in seconds since the epoch (fractional). Times that one instance writes
 * into a shared row and another compares (presence, link claims, rollout offers, reports and
 * leases, platform commands, failed-login windows) are read from it, never from an instance's
 * own clock: a few seconds of skew between hosts would otherwise flap healthy machines offline,
 * fail them in a rollout, offer them or deliver a command again early. An instance's own clock
 * stays for what only it compares (its timers, its links' liveness).
 */
export interface DatabaseClock {
  /** The current time as an SQL expression, evaluated by the statement that uses it. */
  readonly now: RawBuilder<number>
  /** `now` moved by `seconds` (negative: earlier), as an SQL expression. */
  shifted(seconds: number): RawBuilder<number>
  /** The current time, read once: a periodic pass takes all its decisions at one time. */
  read(db: Db): Promise<number>
}

export function databaseClock(dialect: Dialect): DatabaseClock {
  // clock_timestamp(), not now(): the time of the statement, also inside a long transaction.
  const now = dialect === 'postgres' ? sql<number>`extract(epoch from clock_timestamp())::float8` : sql<number>`unixepoch('subsec')`
  return {
    now,
    shifted: (seconds) => sql<number>`(${now} + cast(${seconds} as double precision))`,
    async read(db) {
      const { rows } = await sql<{ now: number }>`select ${now} as now`.execute(db)
      return Number(rows[0]!.now)
    },
  }
}

/**
 * `clock.now` in whole milliseconds since the epoch (a bigint expression), for the tables that
 * keep epoch milliseconds (platform commands, login counters) and the answers that show them.
 */
export function epochMillis(clock: DatabaseClock): RawBuilder<number> {
  return sql<number>`cast(round(${clock.now} * 1000) as bigint)`
}
