import { describe, expect, it } from 'vitest'
import { ProgressThrottle } from '../src/progress-throttle.js'

describe('ProgressThrottle', () => {
  it('passes the first value, then at most one per interval, always 100, whole numbers, nothing after stop', () => {
    let now = 0
    const seen: number[] = []
    const throttle = new ProgressThrottle(1000, (percent) => seen.push(percent), () => now)
    throttle.update(0)
    throttle.update(10)
    now = 999
    throttle.update(20)
    now = 1000
    throttle.update(30.7)
    now = 1200
    throttle.update(100)
    throttle.update(100)
    now = 5000
    throttle.update(Number.NaN)
    throttle.update(130)
    throttle.stop()
    now = 9000
    throttle.update(50)
    expect(seen).toEqual([0, 30, 100])
  })
})
