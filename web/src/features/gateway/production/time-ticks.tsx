import { formatDay, formatHour } from '../../../components/ui/format'
import type { SeriesBucket } from './production-types'

/** Where to put about `count` time ticks over the buckets: every n-th bucket start. */
export function tickIndexes(length: number, count = 6): number[] {
  if (length === 0) return []
  const step = Math.max(1, Math.ceil(length / count))
  const out: number[] = []
  for (let i = 0; i < length; i += step) out.push(i)
  return out
}

/** A tick's text: the time of day over up to two days of hours, else the day. */
export const tickText = (start: number, hours: number) => (hours > 48 ? formatDay(start * 1000) : formatHour(start * 1000))

/** The time axis under an hourly chart: a few bucket starts, each at its column (`columnWidth` wide), on the baseline `y`. */
export function TimeTicks({ buckets, columnWidth, y }: { buckets: readonly SeriesBucket[]; columnWidth: number; y: number }) {
  return tickIndexes(buckets.length).map((i) => (
    <text key={i} x={i * columnWidth} y={y} className="tick">
      {tickText(buckets[i]!.start, buckets.length)}
    </text>
  ))
}
