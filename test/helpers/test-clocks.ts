import { sql } from 'kysely'
import type { DatabaseClock } from '../../src/storage/database-clock.js'

/**
 * A stand-in for the database's clock that reads `time()` (epoch milliseconds) whenever a
 * statement is built: the time is a parameter of the statement, so tests set it exactly instead
 * of waiting for it.
 */
export function clockReading(time: () => number): DatabaseClock {
  const at = (seconds: number) => sql<number>`cast(${seconds} as double precision)`
  return {
    get now() {
      return at(time() / 1000)
    },
    shifted: (seconds) => at(time() / 1000 + seconds),
    read: async () => time() / 1000,
  }
}

/** The database's clock as this process's `Date` tells it: with `freezeClock`, the test moves it. */
export const clockFollowingDate = (): DatabaseClock => clockReading(() => Date.now())

/** A database clock standing at `startMs` until the test sets or advances it. */
export function settableClock(startMs: number): DatabaseClock & { set(ms: number): void; advance(ms: number): void } {
  let ms = startMs
  return Object.assign(clockReading(() => ms), {
    set(to: number) {
      ms = to
    },
    advance(by: number) {
      ms += by
    },
  })
}

/** `clock` moved by `seconds` (a database `seconds` ahead, or behind when negative). */
export function offsetClock(clock: DatabaseClock, seconds: number): DatabaseClock {
  return {
    get now() {
      return clock.shifted(seconds)
    },
    shifted: (more) => clock.shifted(seconds + more),
    read: async (db) => (await clock.read(db)) + seconds,
  }
}
