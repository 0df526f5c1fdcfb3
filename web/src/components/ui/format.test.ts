import { describe, expect, it } from 'vitest'
import { dateLocale, formatDuration, formatSeconds } from './format'

describe('times in the browser’s locale and zone', () => {
  it('uses the browser’s own locale for the language shown, else that language', () => {
    expect(dateLocale('en', ['en-GB', 'de'])).toBe('en-GB')
    expect(dateLocale('zh-CN', ['zh-TW', 'en'])).toBe('zh-TW')
    expect(dateLocale('zh-CN', ['de-DE', 'zh-CN'])).toBe('zh-CN')
    expect(dateLocale('en', ['de-DE'])).toBe('en')
    expect(dateLocale('zh-CN', [])).toBe('zh-CN')
  })

  it('formats with the runtime’s time zone, not a fixed one', () => {
    const at = Date.UTC(2025, 0, 2, 3, 4, 5)
    const expected = new Intl.DateTimeFormat(dateLocale('en'), { year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' }).format(at)
    expect(formatSeconds(at / 1000, 'en', 'never')).toBe(expected)
    expect(formatSeconds(null, 'en', 'never')).toBe('never')
  })

  it('shows durations as m:ss, or h:mm:ss from an hour', () => {
    expect(formatDuration(0)).toBe('0:00')
    expect(formatDuration(65_400)).toBe('1:05')
    expect(formatDuration(3_726_000)).toBe('1:02:06')
  })
})
