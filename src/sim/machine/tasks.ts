import { Type, type Static } from '@sinclair/typebox'
import { ok, type RouteTable } from '@fleetgate/device-agent'
import type { Position } from './axes.js'
import { BoardLayout } from './board.js'
import { toSeconds } from './clock.js'
import type { PickAndPlaceMachine } from './machine.js'
import type { Order, OrderItem } from './orders.js'
import { conflict, parseBody } from './validate-body.js'

export const TASK_STATES = ['idle', 'running', 'paused', 'done', 'stopped'] as const
export const TaskState = Type.Union(TASK_STATES.map((s) => Type.Literal(s)))
export type TaskState = Static<typeof TaskState>

const TaskItem = Type.Object({ index: Type.Integer(), component: Type.String(), x: Type.Number(), y: Type.Number(), angle: Type.Number() })

export const Task = Type.Object({
  id: Type.String(),
  order_id: Type.String(),
  state: TaskState,
  placed: Type.Integer(),
  total: Type.Integer(),
  started_at: Type.Number({ description: 'Seconds since epoch' }),
  finished_at: Type.Union([Type.Number(), Type.Null()]),
  current_item: Type.Union([TaskItem, Type.Null()], { description: 'The item being placed' }),
})
export type Task = Static<typeof Task>

/** What a task did, with the simulated time it happened (ms since epoch), for whoever watches the machine. */
export type TaskEvent =
  | { type: 'started'; task: Task; order: Order; at: number }
  | { type: 'placed'; task: Task; order: Order; item: OrderItem; index: number; at: number }
  | { type: 'paused'; task: Task; at: number; reason: 'operator' | 'parts_exhausted'; component?: string }
  | { type: 'resumed'; task: Task; at: number }
  | { type: 'ended'; task: Task; order: Order; at: number }

export type TaskListener = (event: TaskEvent) => void

const StartBody = Type.Object({ order_id: Type.Optional(Type.String({ minLength: 1 })) })

interface Run {
  task: Task
  order: Order
  layout: BoardLayout
  placeMs: number
  startPosition: Position
  /** Running time accumulated before the current running stretch. */
  progressMs: number
  runningSince: number
  /** Placements already taken from stock. */
  consumed: number
  /** The part whose feeder ran empty, while the task is paused for it. */
  starvedOn: string | undefined
}

/**
 * Places an order's items one by one: idle → running ⇄ paused → done | stopped. Progress is
 * computed from the clock whenever the task is looked at, so no timer runs in the simulator.
 */
export class TaskRunner {
  private run: Run | undefined
  private sequence = 0
  private readonly listeners = new Set<TaskListener>()

  constructor(private readonly machine: PickAndPlaceMachine) {}

  /** Calls `listener` with every start, placement, pause, resume and end; returns the way to stop. */
  observe(listener: TaskListener): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /** The part whose feeder ran empty, while the current task is paused for it. */
  starvedOn(): string | undefined {
    this.advance()
    return this.run?.task.state === 'paused' ? this.run.starvedOn : undefined
  }

  current(): Task | null {
    this.advance()
    return this.run ? { ...this.run.task } : null
  }

  /** The order a running or paused task is placing. */
  activeOrderId(): string | undefined {
    this.advance()
    return this.run && isActive(this.run.task.state) ? this.run.order.id : undefined
  }

  /** Items already placed by the current or last task, with the order they belong to. */
  placedItems(): { order: Order | undefined; items: OrderItem[]; placed: number; layout: BoardLayout | undefined } {
    this.advance()
    if (!this.run) return { order: undefined, items: [], placed: 0, layout: undefined }
    return { order: this.run.order, items: this.run.order.items, placed: this.run.task.placed, layout: this.run.layout }
  }

  start(orderId?: string): Task {
    this.advance()
    if (this.run && isActive(this.run.task.state)) throw conflict('task_active', `task ${this.run.task.id} is ${this.run.task.state}`)
    this.machine.assertNotCalibrating()
    const { orders } = this.machine
    const order = orderId !== undefined ? orders.require(orderId) : orders.latestPending()
    if (!order) throw conflict('no_pending_order', 'no pending order to start')
    if (order.status !== 'pending') throw conflict('order_not_pending', `order ${order.id} is ${order.status}`)
    if (order.items.length === 0) throw conflict('empty_order', `order ${order.id} has no items`)
    const now = this.machine.clock.now()
    const task: Task = {
      id: `task-${String(++this.sequence).padStart(4, '0')}`,
      order_id: order.id,
      state: 'idle',
      placed: 0,
      total: order.items.length,
      started_at: toSeconds(now),
      finished_at: null,
      current_item: null,
    }
    this.run = {
      task,
      order,
      layout: new BoardLayout(order.items),
      placeMs: this.machine.settings.get<number>('place_ms_per_item'),
      startPosition: this.machine.axes.position(),
      progressMs: 0,
      runningSince: now,
      consumed: 0,
      starvedOn: undefined,
    }
    task.state = 'running'
    orders.setStatus(order, 'in_progress')
    this.notify({ type: 'started', task: { ...task }, order, at: now })
    this.advance()
    return { ...task }
  }

  pause(): Task {
    const run = this.requireState('running', 'pause')
    run.progressMs += this.machine.clock.now() - run.runningSince
    run.task.state = 'paused'
    this.machine.axes.hold()
    this.notify({ type: 'paused', task: { ...run.task }, at: this.machine.clock.now(), reason: 'operator' })
    return { ...run.task }
  }

  resume(): Task {
    const run = this.requireState('paused', 'resume')
    run.runningSince = this.machine.clock.now()
    run.task.state = 'running'
    run.starvedOn = undefined
    this.notify({ type: 'resumed', task: { ...run.task }, at: run.runningSince })
    this.advance()
    return { ...run.task }
  }

  stop(): Task {
    this.advance()
    const run = this.run
    if (!run || !isActive(run.task.state)) throw conflict('invalid_transition', `no running or paused task to stop`)
    const now = this.machine.clock.now()
    if (run.task.state === 'running') run.progressMs += now - run.runningSince
    run.task.state = 'stopped'
    run.task.finished_at = toSeconds(now)
    run.task.current_item = null
    this.machine.axes.hold()
    this.machine.orders.setStatus(run.order, 'stopped')
    this.notify({ type: 'ended', task: { ...run.task }, order: run.order, at: now })
    return { ...run.task }
  }

  /** Brings the running task up to the clock: placed count, stock, head position, completion. */
  advance(): void {
    const run = this.run
    if (!run || run.task.state !== 'running') return
    const now = this.machine.clock.now()
    const { task, placeMs } = run
    const progress = run.progressMs + (now - run.runningSince)
    task.placed = Math.min(task.total, Math.floor(progress / placeMs))
    if (!this.consume(run)) return
    if (task.placed >= task.total) {
      const doneAt = run.runningSince + (task.total * placeMs - run.progressMs)
      run.progressMs = task.total * placeMs
      task.state = 'done'
      task.finished_at = toSeconds(doneAt)
      task.current_item = null
      const last = run.order.items[task.total - 1]!
      this.machine.axes.plan(run.layout.machinePoint(last, last.angle), run.layout.machinePoint(last, last.angle), doneAt, 0)
      this.machine.hardware.holding = null
      this.machine.orders.setStatus(run.order, 'done')
      this.machine.extensions.recordUse()
      this.notify({ type: 'ended', task: { ...task }, order: run.order, at: doneAt })
      return
    }
    // The head travels to the item being placed during the first half of its slot.
    const index = task.placed
    const item = run.order.items[index]!
    const previous = run.order.items[index - 1]
    const itemStartedAt = now - (progress - index * placeMs)
    const from = previous ? run.layout.machinePoint(previous, previous.angle) : run.startPosition
    this.machine.axes.plan(from, run.layout.machinePoint(item, item.angle), itemStartedAt, placeMs / 2)
    task.current_item = { index, component: item.component, x: item.x, y: item.y, angle: item.angle }
  }

  /**
   * Takes the parts of the items placed since last time, in order, and reports each placement.
   * When a feeder has run empty the task pauses before that item, at the time it would have
   * picked it; false then.
   */
  private consume(run: Run): boolean {
    const { task, placeMs } = run
    for (; run.consumed < task.placed; run.consumed++) {
      const index = run.consumed
      const item = run.order.items[index]!
      // The item's slot ends at this time (running time since the start, minus what came before this stretch).
      const placedAt = run.runningSince + ((index + 1) * placeMs - run.progressMs)
      if (!this.machine.warehouse.take(item.component)) {
        this.starve(run, index, placedAt - placeMs, item.component)
        return false
      }
      this.notify({ type: 'placed', task: { ...task }, order: run.order, item, index, at: placedAt })
    }
    return true
  }

  /** A feeder ran empty: the task stops before item `index`, paused until someone refills it and resumes. */
  private starve(run: Run, index: number, at: number, component: string): void {
    const { task } = run
    task.placed = index
    run.progressMs = index * run.placeMs
    task.state = 'paused'
    task.current_item = null
    run.starvedOn = component
    this.machine.axes.hold()
    this.notify({ type: 'paused', task: { ...task }, at, reason: 'parts_exhausted', component })
  }

  private notify(event: TaskEvent): void {
    for (const listener of this.listeners) listener(event)
  }

  private requireState(state: TaskState, action: string): Run {
    this.advance()
    const run = this.run
    if (!run || run.task.state !== state) {
      throw conflict('invalid_transition', `cannot ${action}: task is ${run ? run.task.state : 'not started'}`)
    }
    return run
  }
}

const isActive = (state: TaskState) => state === 'running' || state === 'paused' || state === 'idle'

export function registerTaskRoutes(routes: RouteTable, machine: PickAndPlaceMachine): void {
  const { tasks } = machine
  routes.get('/tasks/current', () => ok({ task: tasks.current() }))
  routes.get('/tasks/board_image', () => {
    const { order, placed, items } = tasks.placedItems()
    return ok({ ...machine.cameras.boardImage(), order_id: order?.id ?? null, placed, total: items.length })
  })
  routes.post('/tasks/start', ({ body }) => ok({ started: true, task: tasks.start(parseBody(StartBody, body).order_id) }))
  routes.post('/tasks/pause', () => ok({ paused: true, task: tasks.pause() }))
  routes.post('/tasks/resume', () => ok({ resumed: true, task: tasks.resume() }))
  routes.post('/tasks/stop', () => ok({ stopped: true, task: tasks.stop() }))
}
