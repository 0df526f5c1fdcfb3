/**
 * Times are shown in the browser's locale and time zone (contract §12). The locale is the
 * browser's own preference for the language the console is shown in (en-GB, zh-TW, …), else
 * that language; the time zone is always the browser's (no `timeZone` option).
 */
export function dateLocale(language: string, browserLanguages: readonly string[] = browserPreferences()): string {
  const primary = language.split('-')[0]!.toLowerCase()
  return browserLanguages.find((l) => l.split('-')[0]!.toLowerCase() === primary) ?? language
}

function browserPreferences(): readonly string[] {
  if (typeof navigator === 'undefined') return []
  return navigator.languages?.length ? navigator.languages : [navigator.language]
}

const formatters = new Map<string, Intl.DateTimeFormat>()

function formatter(locale: string): Intl.DateTimeFormat {
  let f = formatters.get(locale)
  if (!f) {
    f = new Intl.DateTimeFormat(locale, { year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' })
    formatters.set(locale, f)
  }
  return f
}

/** Epoch milliseconds as a date and time in the browser's locale and zone. */
export function formatTime(ms: number, language: string): string {
  return formatter(dateLocale(language)).format(ms)
}

/** Gateway times are seconds since epoch (fractional); null means never. */
export function formatSeconds(seconds: number | null | undefined, language: string, never: string): string {
  if (seconds === null || seconds === undefined) return never
  return formatTime(seconds * 1000, language)
}

/** Platform times are milliseconds since epoch. */
export function formatMillis(ms: number | null | undefined, language: string, never: string): string {
  if (ms === null || ms === undefined) return never
  return formatTime(ms, language)
}

/** A duration as h:mm:ss (or m:ss under an hour). */
export function formatDuration(ms: number): string {
  const total = Math.max(0, Math.floor(ms / 1000))
  const h = Math.floor(total / 3600)
  const m = Math.floor((total % 3600) / 60)
  const s = String(total % 60).padStart(2, '0')
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${s}` : `${m}:${s}`
}
