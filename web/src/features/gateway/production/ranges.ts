/** The "Range" choices of the production views: the last 24 hours, 7 days or 30 days up to now. */
export const RANGES = [
  { id: '24h', seconds: 24 * 3600, label: 'production.last24h' },
  { id: '7d', seconds: 7 * 86_400, label: 'production.last7d' },
  { id: '30d', seconds: 30 * 86_400, label: 'production.last30d' },
] as const
export type RangeId = (typeof RANGES)[number]['id']

export const isRangeId = (value: string | null): value is RangeId => RANGES.some((r) => r.id === value)

/** The window `[from, to)` in whole seconds ending now; the hourly series starts on the hour so its buckets are whole. */
export function windowOf(range: RangeId, now = Date.now(), alignToHour = false): { from: number; to: number } {
  const to = Math.ceil(now / 1000)
  const seconds = RANGES.find((r) => r.id === range)!.seconds
  const from = alignToHour ? Math.floor((to - seconds) / 3600) * 3600 : to - seconds
  return { from, to }
}
