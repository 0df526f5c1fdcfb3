import { RouteTable, type HttpMethod, type RouteHandler } from '@fleetgate/device-agent'
import { Axes } from './axes.js'
import { Calibration } from './calibration.js'
import { Cameras, registerCameraRoutes, type CameraOptions } from './cameras.js'
import { systemClock, type Clock } from './clock.js'
import type { ControllerFirmware } from './controller-firmware.js'
import { registerDebugRoutes } from './debug.js'
import { ExtensionStore, registerExtensionRoutes } from './extensions.js'
import { Hardware, registerHardwareRoutes } from './hardware.js'
import { registerOperatorAuthRoutes, type Operator } from './operator-auth.js'
import { OrderBook, registerOrderRoutes } from './orders.js'
import { SerialConsole } from './serial-console.js'
import { SettingsStore } from './settings.js'
import { registerSystemRoutes } from './system.js'
import { registerTaskRoutes, TaskRunner } from './tasks.js'
import { conflict } from './validate-body.js'
import { registerVisionRoutes, VisionState } from './vision.js'
import { registerWarehouseRoutes, Warehouse } from './warehouse.js'

export interface MachineOptions {
  deviceId: string
  /** Time source; tests pass a `ManualClock`. */
  clock?: Clock
  /** Accounts `POST /auth/login` accepts. Default operator:operator. */
  operators?: readonly Operator[]
  firmwareVersion?: string
  /** The motion controller's firmware at start. Default version 1.0.0, from no known release. */
  controllerFirmware?: ControllerFirmware
  /** Simulated time to place one item (the `place_ms_per_item` setting's default). Default 400. */
  placeMsPerItem?: number
  /** Length of `POST /system/cal`. Default 3000. */
  calibrationMs?: number
  cameras?: CameraOptions
}

export type MachineState = 'idle' | 'moving' | 'running' | 'paused' | 'calibrating'

/** Runs the running task's bookkeeping before every handler, so each answer reflects the current time. */
class ClockedRouteTable extends RouteTable {
  constructor(private readonly beforeEach: () => void) {
    super()
  }

  override add(method: HttpMethod, pattern: string, handler: RouteHandler): this {
    return super.add(method, pattern, (request) => {
      this.beforeEach()
      return handler(request)
    })
  }
}

/**
 * A simulated pick-and-place machine answering every device-side endpoint of the gateway
 * (seed §4.3–4.11) and `POST /auth/login`. All state is in memory; time comes from `clock`.
 */
export class PickAndPlaceMachine {
  readonly deviceId: string
  readonly firmwareVersion: string
  readonly clock: Clock
  readonly startedAt: number
  readonly routes: RouteTable
  readonly settings: SettingsStore
  readonly axes: Axes
  readonly hardware = new Hardware()
  readonly calibration: Calibration
  readonly orders: OrderBook
  readonly tasks: TaskRunner
  readonly warehouse = new Warehouse()
  readonly serial: SerialConsole
  readonly vision = new VisionState()
  readonly cameras: Cameras
  readonly extensions: ExtensionStore
  private controller: ControllerFirmware

  constructor(options: MachineOptions) {
    this.deviceId = options.deviceId
    this.firmwareVersion = options.firmwareVersion ?? '2.3.1'
    this.clock = options.clock ?? systemClock
    this.startedAt = this.clock.now()
    this.settings = new SettingsStore(options.placeMsPerItem === undefined ? {} : { place_ms_per_item: options.placeMsPerItem })
    this.axes = new Axes(this.clock)
    this.calibration = new Calibration(this.clock, options.calibrationMs ?? 3000)
    this.orders = new OrderBook(this.clock)
    this.tasks = new TaskRunner(this)
    this.serial = new SerialConsole(this)
    this.cameras = new Cameras(this, options.cameras)
    this.extensions = new ExtensionStore(this.startedAt)
    this.controller = { ...(options.controllerFirmware ?? { display_version: '1.0.0' }) }

    this.routes = new ClockedRouteTable(() => this.tasks.advance())
    registerOperatorAuthRoutes(this.routes, options.operators ?? [{ username: 'operator', password: 'operator' }])
    registerOrderRoutes(this.routes, this)
    registerHardwareRoutes(this.routes, this)
    registerTaskRoutes(this.routes, this)
    registerSystemRoutes(this.routes, this)
    registerDebugRoutes(this.routes, this)
    registerWarehouseRoutes(this.routes, this)
    registerVisionRoutes(this.routes, this)
    registerCameraRoutes(this.routes, this)
    registerExtensionRoutes(this.routes, this)
  }

  state(): MachineState {
    if (this.calibration.running()) return 'calibrating'
    const task = this.tasks.current()
    if (task?.state === 'running' || task?.state === 'paused') return task.state
    return this.axes.moving() ? 'moving' : 'idle'
  }

  /** Why manual motion is refused right now, if it is. */
  busyReason(): 'task_running' | 'calibrating' | undefined {
    if (this.calibration.running()) return 'calibrating'
    if (this.tasks.activeOrderId() !== undefined) return 'task_running'
    return undefined
  }

  /** 409 while a task is running or paused, or calibration runs. */
  assertIdle(): void {
    const reason = this.busyReason()
    if (reason === 'calibrating') throw conflict('calibrating', 'the machine is calibrating')
    if (reason === 'task_running') throw conflict('task_running', 'a task is running or paused; stop it first')
  }

  assertNotCalibrating(): void {
    if (this.calibration.running()) throw conflict('calibrating', 'the machine is calibrating')
  }

  get controllerFirmware(): ControllerFirmware {
    return { ...this.controller }
  }

  installControllerFirmware(firmware: ControllerFirmware): void {
    this.controller = { ...firmware }
  }

  /** What the heartbeat reports (the gateway's `last_status`). */
  status(): Record<string, unknown> {
    const task = this.tasks.current()
    return {
      state: this.state(),
      position: this.axes.position(),
      task: task && { id: task.id, order_id: task.order_id, state: task.state, placed: task.placed, total: task.total },
      calibration: this.calibration.status().state,
      // Contract §10: the switches as last set, so a console shows what the machine says.
      pump: this.hardware.pump,
      valve: this.hardware.valve,
      light: this.hardware.light.state,
      uptime_s: Math.floor((this.clock.now() - this.startedAt) / 1000),
      firmware_version: this.firmwareVersion,
      // Contract §10: the controller's display version; the release it came from beside it.
      firmware: this.controller.display_version,
      firmware_release: this.controller.release_id === undefined ? null : { ...this.controller },
    }
  }
}
