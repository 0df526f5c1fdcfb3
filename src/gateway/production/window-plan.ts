/**
 * Where each part of a window's figures is read from (§16). A window [from, end) — its end is
 * the earlier of `to` and now — is cut into segments: whole UTC days from `production_daily`,
 * whole hours from `production_hourly`, and the partial hours at its edges from the raw events.
 * A partial hour older than the raw events (they are kept `PRODUCTION_RETENTION_DAYS`) is read
 * whole from its hourly row: such a window is answered to the hour.
 */

export const HOUR = 3600
export const DAY = 86400

export type Segment =
  | { source: 'raw'; start: number; end: number }
  /** Rows of `production_hourly` with `hour_start` in [start, end). */
  | { source: 'hour'; start: number; end: number }
  /** Rows of `production_daily` with `day_start` in [start, end). */
  | { source: 'day'; start: number; end: number }

export interface PlannedBucket {
  /** The bucket's aligned start (a series), or the window's `from`. */
  start: number
  /** The time the figures cover: the window's part before now, widened to the hour where raw events are gone. */
  covered: { start: number; end: number }
  span: number
  segments: Segment[]
}

const floorTo = (t: number, unit: number) => Math.floor(t / unit) * unit
const ceilTo = (t: number, unit: number) => Math.ceil(t / unit) * unit

/**
 * Segments of [start, end): raw edges inside hours, whole hours, and (`days`) whole days. A raw
 * edge starting before `rawSince` becomes its whole hour.
 */
export function segmentsOf(start: number, end: number, options: { days: boolean; rawSince: number }): { segments: Segment[]; covered: { start: number; end: number } } {
  if (end <= start) return { segments: [], covered: { start, end: start } }
  const segments: Segment[] = []
  let coveredStart = start
  let coveredEnd = end
  const firstHour = ceilTo(start, HOUR)
  const lastHour = floorTo(end, HOUR)
  const edge = (s: number, e: number) => {
    if (s >= options.rawSince) {
      segments.push({ source: 'raw', start: s, end: e })
      return
    }
    const hour = floorTo(s, HOUR)
    if (!segments.some((seg) => seg.source === 'hour' && seg.start === hour)) segments.push({ source: 'hour', start: hour, end: hour + HOUR })
    coveredStart = Math.min(coveredStart, hour)
    coveredEnd = Math.max(coveredEnd, hour + HOUR)
  }
  if (firstHour >= lastHour) {
    // No whole hour inside: within one hour, or across one hour boundary.
    if (start < firstHour && firstHour < end) {
      edge(start, firstHour)
      edge(firstHour, end)
    } else {
      edge(start, end)
    }
    return { segments, covered: { start: coveredStart, end: coveredEnd } }
  }
  if (start < firstHour) edge(start, firstHour)
  if (options.days) {
    const firstDay = ceilTo(firstHour, DAY)
    const lastDay = floorTo(lastHour, DAY)
    if (firstDay < lastDay) {
      if (firstHour < firstDay) segments.push({ source: 'hour', start: firstHour, end: firstDay })
      segments.push({ source: 'day', start: firstDay, end: lastDay })
      if (lastDay < lastHour) segments.push({ source: 'hour', start: lastDay, end: lastHour })
    } else {
      segments.push({ source: 'hour', start: firstHour, end: lastHour })
    }
  } else {
    segments.push({ source: 'hour', start: firstHour, end: lastHour })
  }
  if (lastHour < end) edge(lastHour, end)
  return { segments, covered: { start: coveredStart, end: coveredEnd } }
}

/** One window, [from, end): whole days, whole hours, raw edges. */
export function planWindow(from: number, end: number, rawSince: number): PlannedBucket {
  const { segments, covered } = segmentsOf(from, end, { days: true, rawSince })
  return { start: from, covered, span: Math.max(0, covered.end - covered.start), segments }
}

/** Buckets of `bucket` seconds (an hour or a day) aligned to UTC that start before `end`, each cut to [from, end). */
export function planSeries(from: number, end: number, bucket: number, rawSince: number): PlannedBucket[] {
  const buckets: PlannedBucket[] = []
  for (let start = floorTo(from, bucket); start < end; start += bucket) {
    const { segments, covered } = segmentsOf(Math.max(from, start), Math.min(end, start + bucket), { days: bucket === DAY, rawSince })
    buckets.push({ start, covered, span: Math.max(0, covered.end - covered.start), segments })
  }
  return buckets
}

/** How many UTC-aligned buckets [from, to) touches. */
export const bucketCount = (from: number, to: number, bucket: number): number => Math.ceil(to / bucket) - Math.floor(from / bucket)
