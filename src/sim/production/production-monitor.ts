import type { MachineState, ProductionEventInput } from '@fleetgate/device-agent'
import type { PickAndPlaceMachine } from '../machine/machine.js'
import type { OrderItem } from '../machine/orders.js'
import type { Task, TaskEvent } from '../machine/tasks.js'
import { demoBoard } from './auto-jobs.js'
import { MissModel, type BadFeeder, type WorseFirmware } from './miss-model.js'
import { productionHistory } from './production-history.js'
import type { Random } from './seeded-random.js'

export interface ProductionMonitorOptions {
  /** Share of picks that fail, 0–1. Default 0.003. */
  missRate?: number
  /** Feeders of this machine with their own miss rate. */
  badFeeders?: readonly BadFeeder[]
  worseFirmware?: WorseFirmware
  /** Draws misses and fault kinds. Default Math.random. */
  random?: Random
  /** Nozzles on the head, used in turn. Default 4. */
  nozzles?: number
  /** A `placements` event per this much simulated time with placements. Default 10 s. */
  placementsEveryMs?: number
}

export type ReportProduction = (event: ProductionEventInput) => void

interface PlacementCounts {
  placed: number
  missed: number
}

/** Placements of one job within one reporting window. */
interface Window extends PlacementCounts {
  jobId: string
  endsAt: number
  lastAt: number
  feeders: Map<string, PlacementCounts>
  nozzles: Map<string, PlacementCounts>
}

/** Share of misses the vision check catches (the rest fail at pick-up). */
const VISION_SHARE = 0.3

/**
 * Reports what a simulated machine does as contract §16's production events: `productive` while
 * placing, `standby` when idle or paused, `unscheduled_down` (`parts_exhausted`) when a feeder
 * runs empty, `engineering` while calibrating; `job_started`/`job_ended` per task; `placements`
 * per 10 s of simulated time, by feeder and nozzle; a `fault` for every miss. Times are the
 * machine's clock, to the placement.
 */
export class ProductionMonitor {
  private readonly misses: MissModel
  private readonly random: Random
  private readonly nozzles: number
  private readonly everyMs: number
  private readonly windows: Window[] = []
  private reported: { state: MachineState; reason?: string } | undefined
  /** The job of the current task, by task id. */
  private job: { taskId: string; jobId: string } | undefined
  private unobserve: (() => void) | undefined
  private timer: NodeJS.Timeout | undefined

  constructor(
    private readonly machine: PickAndPlaceMachine,
    private readonly report: ReportProduction,
    options: ProductionMonitorOptions = {},
  ) {
    this.random = options.random ?? Math.random
    const badFeeders = new Map((options.badFeeders ?? []).map((f) => [f.feeder, f.rate]))
    this.misses = new MissModel(this.random, options.missRate ?? 0.003, badFeeders, options.worseFirmware)
    this.nozzles = options.nozzles ?? 4
    this.everyMs = options.placementsEveryMs ?? 10_000
  }

  /** Reports the current state and watches the machine; `tickMs` > 0 also ticks on a timer. */
  start(tickMs = 1000): this {
    this.unobserve = this.machine.tasks.observe((event) => this.onTask(event))
    this.tick()
    if (tickMs > 0) {
      this.timer = setInterval(() => this.tick(), tickMs)
      this.timer.unref()
    }
    return this
  }

  stop(): void {
    clearInterval(this.timer)
    this.unobserve?.()
  }

  /**
   * Reports `hours` of production history ending now as late events with their past `ts`
   * (`fleetgate demo`): jobs of the demo board at the machine's speed and miss rates, so the
   * production figures have data at once and a firmware offer finds placements before it. Call
   * before `start()`. Returns how many events it reported.
   */
  reportHistory(hours: number): number {
    const events = productionHistory({
      hours,
      endMs: this.machine.clock.now(),
      placeMs: this.machine.settings.get<number>('place_ms_per_item'),
      board: demoBoard(),
      feederOf: (component) => this.feederOf(component),
      missesFor: (feeder) => this.misses.missesFor(feeder, this.machine.controllerFirmware.release_id),
      random: this.random,
      nozzles: this.nozzles,
    })
    for (const event of events) this.report(event)
    return events.length
  }

  /** Brings the task up to the clock, reports a state the machine moved to by itself, and the placements of the windows that ended. */
  tick(): void {
    this.machine.tasks.advance()
    const now = this.machine.clock.now()
    const { state, reason } = this.currentState()
    this.setState(state, reason, now)
    this.flushWindows((w) => w.endsAt <= now)
  }

  private currentState(): { state: MachineState; reason?: string } {
    if (this.machine.calibration.running()) return { state: 'engineering', reason: 'calibration' }
    const task = this.machine.tasks.current()
    if (task?.state === 'running') return { state: 'productive' }
    if (task?.state === 'paused') return this.machine.tasks.starvedOn() === undefined ? { state: 'standby', reason: 'paused' } : { state: 'unscheduled_down', reason: 'parts_exhausted' }
    return { state: 'standby', reason: 'no_product' }
  }

  private onTask(event: TaskEvent): void {
    switch (event.type) {
      case 'started': {
        const jobId = jobIdOf(event.task)
        this.job = { taskId: event.task.id, jobId }
        this.report({ kind: 'job_started', job_id: jobId, order_id: event.order.id, program: event.order.name.slice(0, 256), boards_planned: 1, ts: event.at / 1000 })
        return this.setState('productive', undefined, event.at)
      }
      case 'placed':
        return this.onPlaced(event.task, event.item, event.index, event.at)
      case 'paused':
        if (event.reason === 'operator') return this.setState('standby', 'paused', event.at)
        this.report({ kind: 'fault', fault: 'parts_exhausted', feeder: this.feederOf(event.component!), part: event.component!.slice(0, 256), ts: event.at / 1000 })
        return this.setState('unscheduled_down', 'parts_exhausted', event.at)
      case 'resumed':
        return this.setState('productive', undefined, event.at)
      case 'ended': {
        const jobId = this.jobIdFor(event.task)
        this.flushWindows((w) => w.jobId === jobId)
        const done = event.task.state === 'done'
        this.report({ kind: 'job_ended', job_id: jobId, result: done ? 'completed' : 'stopped', boards_done: done ? 1 : 0, ts: event.at / 1000 })
        this.job = undefined
        return this.setState('standby', 'no_product', event.at)
      }
    }
  }

  private onPlaced(task: Task, item: OrderItem, index: number, at: number): void {
    const feeder = this.feederOf(item.component)
    const nozzle = `N${(index % this.nozzles) + 1}`
    const missed = this.misses.missesFor(feeder, this.machine.controllerFirmware.release_id)
    const designator = (item.designator ?? `#${index + 1}`).slice(0, 64)
    for (let miss = 0; miss < missed; miss++) {
      const fault = this.random() < VISION_SHARE ? 'vision_error' : 'pickup_error'
      this.report({ kind: 'fault', fault, feeder, nozzle, designator, part: item.component.slice(0, 256), ts: at / 1000 })
    }
    const window = this.windowFor(this.jobIdFor(task), at)
    window.placed++
    window.missed += missed
    window.lastAt = at
    add(window.feeders, feeder, missed)
    add(window.nozzles, nozzle, missed)
  }

  private windowFor(jobId: string, at: number): Window {
    const endsAt = (Math.floor(at / this.everyMs) + 1) * this.everyMs
    let window = this.windows.find((w) => w.jobId === jobId && w.endsAt === endsAt)
    if (!window) {
      window = { jobId, endsAt, lastAt: at, placed: 0, missed: 0, feeders: new Map(), nozzles: new Map() }
      this.windows.push(window)
    }
    return window
  }

  private flushWindows(ended: (window: Window) => boolean): void {
    for (let i = 0; i < this.windows.length; ) {
      const window = this.windows[i]!
      if (!ended(window)) {
        i++
        continue
      }
      this.windows.splice(i, 1)
      this.report({
        kind: 'placements',
        placed: window.placed,
        missed: window.missed,
        job_id: window.jobId,
        feeders: [...window.feeders].map(([feeder, counts]) => ({ feeder, ...counts })),
        nozzles: [...window.nozzles].map(([nozzle, counts]) => ({ nozzle, ...counts })),
        ts: window.lastAt / 1000,
      })
    }
  }

  private setState(state: MachineState, reason: string | undefined, at: number): void {
    if (this.reported?.state === state && this.reported.reason === reason) return
    this.reported = { state, reason }
    this.report({ kind: 'state', state, ...(reason !== undefined && { reason }), ts: at / 1000 })
  }

  /** The feeder slot a part is picked from: `F1`–`F12`, `manual` for a part in no feeder. */
  private feederOf(component: string): string {
    const slot = this.machine.warehouse.match(component)?.feeder_slot
    return slot ? `F${slot}` : 'manual'
  }

  private jobIdFor(task: Task): string {
    return this.job?.taskId === task.id ? this.job.jobId : jobIdOf(task)
  }
}

/** Unique per machine across simulator restarts (task ids start over): the task id and its start time. */
const jobIdOf = (task: Task) => `${task.id}-${Math.round(task.started_at * 1000).toString(36)}`

function add(counts: Map<string, PlacementCounts>, name: string, missed: number): void {
  const entry = counts.get(name) ?? { placed: 0, missed: 0 }
  entry.placed++
  entry.missed += missed
  counts.set(name, entry)
}
