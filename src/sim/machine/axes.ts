import { Type, type Static } from '@sinclair/typebox'
import type { Clock } from './clock.js'

export const Position = Type.Object({ x: Type.Number(), y: Type.Number(), z: Type.Number(), r: Type.Number() })
export type Position = Static<typeof Position>

/** Soft limits in mm; the rotation axis is endless. */
export const AXIS_LIMITS = { x: { min: 0, max: 400 }, y: { min: 0, max: 300 }, z: { min: 0, max: 50 } } as const
export const MAX_SPEED_MM_S = 500
export const ROTATION_DEG_PER_S = 720

const round3 = (v: number) => Math.round(v * 1000) / 1000 + 0

/** Time to travel: the linear path at `speed` mm/s and the rotation at 720°/s run together. */
export function travelMs(from: Position, to: Position, speedMmS: number): number {
  const linearMs = (Math.hypot(to.x - from.x, to.y - from.y, to.z - from.z) / speedMmS) * 1000
  const rotationMs = (Math.abs(to.r - from.r) / ROTATION_DEG_PER_S) * 1000
  return Math.ceil(Math.max(linearMs, rotationMs))
}

/** Why a target is outside the soft limits, or undefined. */
export function limitViolation(target: Position): string | undefined {
  for (const axis of ['x', 'y', 'z'] as const) {
    const { min, max } = AXIS_LIMITS[axis]
    if (target[axis] < min || target[axis] > max) return `${axis} ${target[axis]} mm is outside the soft limits ${min}–${max} mm`
  }
  return undefined
}

export const clampToLimits = (p: Position): Position => ({
  x: Math.min(AXIS_LIMITS.x.max, Math.max(AXIS_LIMITS.x.min, p.x)),
  y: Math.min(AXIS_LIMITS.y.max, Math.max(AXIS_LIMITS.y.min, p.y)),
  z: Math.min(AXIS_LIMITS.z.max, Math.max(AXIS_LIMITS.z.min, p.z)),
  r: p.r,
})

/** The gantry: one straight move at a time, position interpolated linearly from the clock. */
export class Axes {
  private from: Position
  private to: Position
  private startAt = 0
  private durationMs = 0

  constructor(
    private readonly clock: Clock,
    home: Position = { x: 0, y: 0, z: 0, r: 0 },
  ) {
    this.from = { ...home }
    this.to = { ...home }
  }

  position(): Position {
    const elapsed = this.clock.now() - this.startAt
    if (this.durationMs <= 0 || elapsed >= this.durationMs) return roundPosition(this.to)
    if (elapsed <= 0) return roundPosition(this.from)
    const f = elapsed / this.durationMs
    const lerp = (a: number, b: number) => a + (b - a) * f
    return roundPosition({ x: lerp(this.from.x, this.to.x), y: lerp(this.from.y, this.to.y), z: lerp(this.from.z, this.to.z), r: lerp(this.from.r, this.to.r) })
  }

  target(): Position {
    return roundPosition(this.to)
  }

  moving(): boolean {
    return this.clock.now() - this.startAt < this.durationMs
  }

  /** Starts a move from wherever the head is now; answers the time it takes. */
  moveTo(target: Position, speedMmS: number): number {
    const from = this.position()
    const eta = travelMs(from, target, speedMmS)
    this.plan(from, target, this.clock.now(), eta)
    return eta
  }

  /** A move with an explicit start time and duration (task placement, homing). */
  plan(from: Position, to: Position, startAt: number, durationMs: number): void {
    this.from = { ...from }
    this.to = { ...to }
    this.startAt = startAt
    this.durationMs = durationMs
  }

  /** Stops where the head is now. */
  hold(): void {
    const here = this.position()
    this.plan(here, here, this.clock.now(), 0)
  }
}

function roundPosition(p: Position): Position {
  return { x: round3(p.x), y: round3(p.y), z: round3(p.z), r: round3(p.r) }
}
