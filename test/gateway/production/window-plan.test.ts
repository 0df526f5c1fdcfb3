import { describe, expect, it } from 'vitest'
import { bucketCount, DAY, HOUR, planSeries, planWindow } from '../../../src/gateway/production/window-plan.js'

const D0 = 1_780_000_000 - (1_780_000_000 % DAY) // a UTC midnight
const old = 0 // raw events kept from the beginning
const sources = (plan: ReturnType<typeof planWindow>) => plan.segments.map((s) => `${s.source}:${(s.start - D0) / HOUR}-${(s.end - D0) / HOUR}`)

describe('where a window is read from (§16)', () => {
  it('reads whole days from the daily rows, the hours around them from hourly rows and the partial hours from raw events', () => {
    const plan = planWindow(D0 - 1.5 * HOUR, D0 + 2 * DAY + 2.25 * HOUR, old)
    expect(sources(plan)).toEqual(['raw:-1.5--1', 'hour:-1-0', 'day:0-48', 'hour:48-50', 'raw:50-50.25'])
    expect(plan.span).toBe(2 * DAY + 3.75 * HOUR)
  })

  it('reads a window within one hour, or across one hour boundary, from raw events', () => {
    expect(sources(planWindow(D0 + 0.25 * HOUR, D0 + 0.5 * HOUR, old))).toEqual(['raw:0.25-0.5'])
    expect(sources(planWindow(D0 + 0.5 * HOUR, D0 + 1.5 * HOUR, old))).toEqual(['raw:0.5-1', 'raw:1-1.5'])
    expect(sources(planWindow(D0, D0 + 0.5 * HOUR, old))).toEqual(['raw:0-0.5'])
  })

  it('reads only hours when no whole day is inside', () => {
    expect(sources(planWindow(D0 + HOUR, D0 + 5 * HOUR, old))).toEqual(['hour:1-5'])
  })

  it('answers a window older than the raw events to the hour: its partial hours are read whole', () => {
    const plan = planWindow(D0 + 0.5 * HOUR, D0 + 3.25 * HOUR, D0 + 10 * DAY)
    expect(sources(plan)).toEqual(['hour:0-1', 'hour:1-3', 'hour:3-4'])
    expect(plan.covered).toEqual({ start: D0, end: D0 + 4 * HOUR })
    expect(plan.span).toBe(4 * HOUR)
  })

  it('cuts a series into UTC-aligned buckets, the first and last cut to the window', () => {
    const hours = planSeries(D0 + 0.5 * HOUR, D0 + 2.5 * HOUR, HOUR, old)
    expect(hours.map((b) => [(b.start - D0) / HOUR, b.span / HOUR])).toEqual([
      [0, 0.5],
      [1, 1],
      [2, 0.5],
    ])
    const days = planSeries(D0 + 12 * HOUR, D0 + 2 * DAY, DAY, old)
    expect(days.map((b) => b.segments.map((s) => s.source))).toEqual([['hour'], ['day']])
    expect(bucketCount(D0 + 0.5 * HOUR, D0 + 2.5 * HOUR, HOUR)).toBe(3)
    expect(bucketCount(D0, D0 + 1000 * HOUR, HOUR)).toBe(1000)
  })
})
