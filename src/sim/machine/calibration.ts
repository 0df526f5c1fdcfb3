import { toSeconds, type Clock } from './clock.js'

export type CalibrationState = 'never' | 'running' | 'done'

/** A homing and camera calibration run lasting a few seconds of machine time. */
export class Calibration {
  private startedAt: number | undefined
  private completedAt: number | undefined

  constructor(
    private readonly clock: Clock,
    readonly durationMs: number,
  ) {}

  running(): boolean {
    return this.startedAt !== undefined && this.clock.now() < this.startedAt + this.durationMs
  }

  everCompleted(): boolean {
    return this.lastCompletedAt() !== undefined
  }

  start(): void {
    this.startedAt = this.clock.now()
  }

  status() {
    const now = this.clock.now()
    const state: CalibrationState = this.running() ? 'running' : this.everCompleted() ? 'done' : 'never'
    const progress = state === 'running' ? Math.min(1, (now - this.startedAt!) / this.durationMs) : state === 'done' ? 1 : 0
    const completed = this.lastCompletedAt()
    return {
      state,
      progress: Math.round(progress * 1000) / 1000,
      started_at: this.startedAt === undefined ? null : toSeconds(this.startedAt),
      completed_at: completed === undefined ? null : toSeconds(completed),
      duration_ms: this.durationMs,
    }
  }

  private lastCompletedAt(): number | undefined {
    if (this.startedAt !== undefined && this.clock.now() >= this.startedAt + this.durationMs) this.completedAt = this.startedAt + this.durationMs
    return this.completedAt
  }
}
