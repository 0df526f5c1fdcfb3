/** Gateway times are seconds since epoch (fractional); null means never. */
export function formatSeconds(seconds: number | null | undefined, language: string, never: string): string {
  if (seconds === null || seconds === undefined) return never
  return new Date(seconds * 1000).toLocaleString(language)
}

/** Platform times are milliseconds since epoch. */
export function formatMillis(ms: number | null | undefined, language: string, never: string): string {
  if (ms === null || ms === undefined) return never
  return new Date(ms).toLocaleString(language)
}
