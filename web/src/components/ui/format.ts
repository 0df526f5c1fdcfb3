/**
 * Every date, time, number and percentage the console shows goes through here (contract §12:
 * "Times are shown in the browser's locale and time zone"). The locale is the browser's own
 * (`navigator.languages`), not the language the console's words are in: an English console in a
 * de-DE browser shows `29.11.2026, 01:17:03` and `1.234,5`. The time zone is the browser's.
 * Tests pass `where` to pin both.
 */
export interface Where {
  /** BCP 47 locales, most preferred first (default: the browser's `navigator.languages`). */
  locales?: readonly string[]
  /** IANA time zone (default: the browser's own). */
  timeZone?: string
}

/** The browser's preferred locales, most preferred first. */
export function browserLocales(): readonly string[] {
  if (typeof navigator === 'undefined') return []
  const languages = navigator.languages?.length ? navigator.languages : navigator.language ? [navigator.language] : []
  return languages.filter((l) => {
    try {
      return Intl.getCanonicalLocales(l).length > 0
    } catch {
      return false
    }
  })
}

const cache = new Map<string, Intl.DateTimeFormat | Intl.NumberFormat>()

function cached<F extends Intl.DateTimeFormat | Intl.NumberFormat>(kind: string, where: Where, options: object, make: (locales: string[]) => F): F {
  const locales = [...(where.locales ?? browserLocales())]
  const key = `${kind}|${locales.join(',')}|${where.timeZone ?? ''}|${JSON.stringify(options)}`
  let f = cache.get(key) as F | undefined
  if (!f) {
    f = make(locales)
    cache.set(key, f)
  }
  return f
}

const dateTime = (where: Where, options: Intl.DateTimeFormatOptions) =>
  cached('date', where, options, (locales) => new Intl.DateTimeFormat(locales, { ...options, ...(where.timeZone ? { timeZone: where.timeZone } : {}) }))

const number = (where: Where, options: Intl.NumberFormatOptions) => cached('number', where, options, (locales) => new Intl.NumberFormat(locales, options))

const DATE_TIME: Intl.DateTimeFormatOptions = { year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' }
const SHORT_DATE_TIME: Intl.DateTimeFormatOptions = { month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric' }
const HOUR: Intl.DateTimeFormatOptions = { hour: 'numeric', minute: 'numeric' }
const DAY: Intl.DateTimeFormatOptions = { month: 'numeric', day: 'numeric' }

/** Epoch milliseconds as a date and time. */
export function formatTime(ms: number, where: Where = {}): string {
  return dateTime(where, DATE_TIME).format(ms)
}

/** Epoch milliseconds as a date and time without year and seconds (chart ticks, hour ranges). */
export function formatShortTime(ms: number, where: Where = {}): string {
  return dateTime(where, SHORT_DATE_TIME).format(ms)
}

/** Epoch milliseconds as a time of day (chart ticks within a day). */
export function formatHour(ms: number, where: Where = {}): string {
  return dateTime(where, HOUR).format(ms)
}

/** Epoch milliseconds as a day and month (chart ticks over days). */
export function formatDay(ms: number, where: Where = {}): string {
  return dateTime(where, DAY).format(ms)
}

/** Gateway times are seconds since epoch (fractional); null means never. */
export function formatSeconds(seconds: number | null | undefined, never: string, where: Where = {}): string {
  if (seconds === null || seconds === undefined) return never
  return formatTime(seconds * 1000, where)
}

/** Platform times are milliseconds since epoch. */
export function formatMillis(ms: number | null | undefined, never: string, where: Where = {}): string {
  if (ms === null || ms === undefined) return never
  return formatTime(ms, where)
}

/** A number with the locale's digits, grouping and decimal sign; at most `maximumFractionDigits` decimals (default 2). */
export function formatNumber(value: number, options: Intl.NumberFormatOptions = {}, where: Where = {}): string {
  return number(where, { maximumFractionDigits: 2, ...options }).format(value)
}

/** A number with exactly `digits` decimals (positions in mm, coordinates). */
export function formatFixed(value: number, digits: number, where: Where = {}): string {
  return formatNumber(value, { minimumFractionDigits: digits, maximumFractionDigits: digits }, where)
}

/** A ratio as a percentage (0.873 → "87.3 %" in de-DE, "87.3%" in en); never capped: 1.12 → 112%. */
export function formatPercent(ratio: number, digits = 1, where: Where = {}): string {
  return number(where, { style: 'percent', minimumFractionDigits: 0, maximumFractionDigits: digits }).format(ratio)
}

/** A byte count: "2.1 kB", "15 MB" (1 kB = 1000 B). */
export function formatBytes(bytes: number, where: Where = {}): string {
  const units = ['byte', 'kilobyte', 'megabyte', 'gigabyte'] as const
  let value = bytes
  let unit = 0
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000
    unit++
  }
  return formatNumber(value, { style: 'unit', unit: units[unit], unitDisplay: 'short', maximumFractionDigits: unit === 0 ? 0 : 1 }, where)
}

/** A duration as h:mm:ss (or m:ss under an hour); the hours grouped in the locale's way. */
export function formatDuration(ms: number, where: Where = {}): string {
  const total = Math.max(0, Math.floor(ms / 1000))
  const h = Math.floor(total / 3600)
  const m = Math.floor((total % 3600) / 60)
  const s = String(total % 60).padStart(2, '0')
  return h > 0 ? `${formatNumber(h, {}, where)}:${String(m).padStart(2, '0')}:${s}` : `${m}:${s}`
}

/**
 * The i18next formatter (i18n.ts): every number put into a translated sentence ("{{count}}
 * failed", "{{percent}}%") is written in the browser's locale; anything else as it is.
 */
export function formatInterpolated(value: unknown): unknown {
  // Up to 6 decimals: a sentence may carry a measured value (a telemetry reading), not only counts.
  return typeof value === 'number' && Number.isFinite(value) ? formatNumber(value, { maximumFractionDigits: 6 }) : value
}
