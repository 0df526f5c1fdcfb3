import { afterEach, describe, expect, it, vi } from 'vitest'
import i18next from 'i18next'
import { setupI18n } from '../../i18n/i18n'
import { browserLocales, formatBytes, formatDuration, formatFixed, formatNumber, formatPercent, formatSeconds, formatTime } from './format'

// A German browser in Tokyo: the console's words may be English, its dates and numbers are German, its clock Tokyo's.
const berlin = { locales: ['de-DE'], timeZone: 'Europe/Berlin' }
const tokyo = { locales: ['de-DE'], timeZone: 'Asia/Tokyo' }
const at = Date.UTC(2026, 10, 29, 0, 17, 3) // 2026-11-29T00:17:03Z

afterEach(() => vi.restoreAllMocks())

describe('dates, times and numbers in the browser’s locale and zone', () => {
  it('writes a time in the locale’s order and the zone’s clock', () => {
    expect(formatTime(at, berlin)).toBe('29.11.2026, 01:17:03')
    expect(formatTime(at, tokyo)).toBe('29.11.2026, 09:17:03')
    expect(formatTime(at, { locales: ['en-US'], timeZone: 'America/New_York' })).toBe('11/28/2026, 7:17:03 PM')
    expect(formatSeconds(at / 1000, 'never', tokyo)).toBe('29.11.2026, 09:17:03')
    expect(formatSeconds(null, 'never', tokyo)).toBe('never')
  })

  it('takes the locale from navigator.languages, not from the console’s language', () => {
    vi.spyOn(navigator, 'languages', 'get').mockReturnValue(['de-DE', 'en'])
    setupI18n('en')
    expect(browserLocales()).toEqual(['de-DE', 'en'])
    expect(formatTime(at, { timeZone: 'Europe/Berlin' })).toBe('29.11.2026, 01:17:03')
    expect(formatNumber(1234.5)).toBe('1.234,5')
  })

  it('writes numbers, fixed decimals, percentages and bytes the German way', () => {
    expect(formatNumber(1234567.891, {}, berlin)).toBe('1.234.567,89')
    expect(formatFixed(12.5, 2, berlin)).toBe('12,50')
    expect(formatPercent(0.8734, 1, berlin)).toBe('87,3\u00a0%')
    expect(formatPercent(1.125, 1, berlin)).toBe('112,5\u00a0%')
    expect(formatPercent(0.8734, 1, { locales: ['en-US'] })).toBe('87.3%')
    expect(formatBytes(2_100_000, berlin)).toBe('2,1 MB')
  })

  it('writes numbers put into translated sentences in the browser’s locale', () => {
    vi.spyOn(navigator, 'languages', 'get').mockReturnValue(['de-DE'])
    setupI18n('en')
    expect(i18next.t('rollouts.installedOf', { installed: 1200, targeted: 2500 })).toBe('1.200 of 2.500 installed')
    expect(i18next.t('rollouts.failedCount', { count: 1 })).toBe('1 failed')
    expect(i18next.t('rollouts.settings', { ratio: 0.125, seconds: 86_400 })).toBe('Max failure ratio 0,125, soak time 86.400 s')
  })

  it('shows durations as m:ss, or h:mm:ss from an hour', () => {
    expect(formatDuration(0, berlin)).toBe('0:00')
    expect(formatDuration(65_400, berlin)).toBe('1:05')
    expect(formatDuration(3_726_000, berlin)).toBe('1:02:06')
  })
})
