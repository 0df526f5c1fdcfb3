import { vi } from 'vitest'

/**
 * Freezes `Date` (only `Date`: timers and I/O stay real) so command time-outs, TTLs and
 * liveness are driven by the test, never by sleeping.
 */
export function freezeClock(start = Date.now()) {
  vi.useFakeTimers({ toFake: ['Date'], now: start })
  let now = start
  return {
    now: () => now,
    advance(ms: number) {
      now += ms
      vi.setSystemTime(now)
    },
    restore() {
      vi.useRealTimers()
    },
  }
}
