import type { PickAndPlaceMachine } from '../machine/machine.js'
import type { OrderItem } from '../machine/orders.js'

export interface AutoJobOptions {
  /** Idle time before the first job. Default 20 s (time for a firmware offer to land first). */
  firstJobAfterMs?: number
  /** Idle time between two jobs (the board changes). Default 15 s. */
  boardChangeMs?: number
  /** Time an operator takes to refill a feeder that ran empty. Default 45 s. */
  refillAfterMs?: number
  /** Parts loaded into a feeder at a refill. Default 2000. */
  refillParts?: number
}

/**
 * Keeps a simulated machine producing without anyone driving it (`fleetgate sim --auto-jobs`,
 * `npm run demo`): places the demo board again and again with a board change between jobs, and
 * refills a feeder that ran empty after a while, then resumes.
 */
export class AutoJobs {
  private readonly firstJobAfterMs: number
  private readonly boardChangeMs: number
  private readonly refillAfterMs: number
  private readonly refillParts: number
  /** When the next job starts; undefined while one runs (then set from its end). */
  private nextJobAt: number | undefined
  private starvedSince: number | undefined
  private jobs = 0
  private timer: NodeJS.Timeout | undefined

  constructor(
    private readonly machine: PickAndPlaceMachine,
    options: AutoJobOptions = {},
  ) {
    this.firstJobAfterMs = options.firstJobAfterMs ?? 20_000
    this.boardChangeMs = options.boardChangeMs ?? 15_000
    this.refillAfterMs = options.refillAfterMs ?? 45_000
    this.refillParts = options.refillParts ?? 2000
    this.nextJobAt = machine.clock.now() + this.firstJobAfterMs
  }

  start(tickMs = 1000): this {
    this.timer = setInterval(() => this.tick(), tickMs)
    this.timer.unref()
    return this
  }

  stop(): void {
    clearInterval(this.timer)
  }

  tick(): void {
    const { machine } = this
    const now = machine.clock.now()
    const task = machine.tasks.current()
    if (task?.state === 'running') return
    if (task?.state === 'paused') return this.refillWhenDue(now)
    this.starvedSince = undefined
    if (machine.busyReason() !== undefined) return
    this.nextJobAt ??= (task?.finished_at != null ? task.finished_at * 1000 : now) + this.boardChangeMs
    if (now < this.nextJobAt) return
    const order = machine.orders.create(`demo-board rev ${1 + (this.jobs % 3)}`, demoBoard(), {})
    machine.tasks.start(order.id)
    this.jobs++
    this.nextJobAt = undefined
  }

  private refillWhenDue(now: number): void {
    const component = this.machine.tasks.starvedOn()
    if (component === undefined) return // paused by someone: theirs to resume
    this.starvedSince ??= now
    if (now - this.starvedSince < this.refillAfterMs) return
    const match = this.machine.warehouse.match(component)
    if (match) match.stock += this.refillParts
    this.starvedSince = undefined
    this.machine.tasks.resume()
  }
}

/** The demo board: 60 parts of the starter library, with designators. */
export function demoBoard(): OrderItem[] {
  const parts: [prefix: string, component: string, count: number][] = [
    ['R', '10k', 20],
    ['RN', '4k7', 10],
    ['C', '100nF', 20],
    ['CB', '10uF', 6],
    ['D', 'LED_Green', 3],
    ['U', 'STM32F103C8Tx', 1],
  ]
  const items: OrderItem[] = []
  for (const [prefix, component, count] of parts) {
    for (let n = 1; n <= count; n++) {
      const i = items.length
      items.push({ component, designator: `${prefix}${n}`, x: 5 + (i % 10) * 6, y: 5 + Math.floor(i / 10) * 6, angle: (i % 4) * 90 })
    }
  }
  return items
}
