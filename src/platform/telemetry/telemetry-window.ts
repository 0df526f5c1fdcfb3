import { badRequest } from '../../errors.js'

const DAY_MS = 86_400_000
/** Contract §7: a record's `ts` lies within [now − 30 days, now + 1 day]. */
export const TS_PAST_MS = 30 * DAY_MS
export const TS_FUTURE_MS = DAY_MS

/** The record's time: its `ts`, or `now` when absent; 400 naming the record when out of the window. */
export function recordTime(ts: number | undefined, now: number, index: number, what = 'record'): number {
  if (ts === undefined) return now
  if (ts < now - TS_PAST_MS || ts > now + TS_FUTURE_MS) {
    throw badRequest(`${what} ${index}: ts ${ts} is outside [now − 30 days, now + 1 day]`, { index })
  }
  return ts
}
