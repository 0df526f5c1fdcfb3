/** Milliseconds since the epoch. The machine reads time only through this, so tests can drive it. */
export interface Clock {
  now(): number
}

export const systemClock: Clock = { now: () => Date.now() }

/** A clock that moves only when told to. */
export class ManualClock implements Clock {
  constructor(private current = Date.UTC(2024, 0, 1)) {}

  now(): number {
    return this.current
  }

  advance(ms: number): void {
    this.current += ms
  }
}

/** Gateway timestamps are fractional seconds (seed §2). */
export const toSeconds = (ms: number) => ms / 1000
