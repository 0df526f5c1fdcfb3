import type { RequestFrame, ResponseFrame } from '../../protocol/frames.js'
import type { LinkHint, LiveState } from '../live-state.js'

/** Bindings removed: one user's binding of a device, or all of a device's (`username` absent); `all` when some removals may have been missed. */
export type BindingRemoval = { device_id: string; username?: string } | { all: true }

/** What keeps binding checks in memory (the gateway's binding cache). */
export interface BindingWatcher {
  remove(removal: BindingRemoval): void
  /** False while removals made elsewhere may go unheard (the bus is disconnected). */
  setEnabled(enabled: boolean): void
}

/** A forwarded call as the bus carries it: a request frame without its type and id. */
export type DeviceCall = Omit<RequestFrame, 'type' | 'id'>

/** The device's answer: the status and data of its response frame. */
export type DeviceAnswer = Pick<ResponseFrame, 'status' | 'data'>

/**
 * "Send this request to device X and await the answer", wherever X is linked. One
 * implementation per deployment: in-process (one instance) or NATS (several instances).
 */
export interface DeviceBus {
  /** This instance's id, recorded as the holder of the links it accepts. */
  readonly instanceId: string
  /**
   * Other instances may claim devices too (several instances share the database). When false,
   * every claim goes through this process, so a claim needs no read-back of the generations.
   */
  readonly sharedWithOtherInstances: boolean
  /**
   * Forwards `call` and resolves with the device's answer. Rejects with an `AppError`:
   * `device_unavailable` (not linked, or the link closed), `server_busy` (64 in flight) or
   * `device_timeout` (no answer within `timeoutMs`).
   */
  request(deviceId: string, call: DeviceCall, timeoutMs: number): Promise<DeviceAnswer>
  /** Live state of the devices linked anywhere; a device absent from the map is not linked. */
  live(devices: readonly LinkHint[]): Promise<Map<string, LiveState>>
  /**
   * Announces that this instance holds the device's link of fencing `generation`: once it
   * resolves, this instance receives every later announcement for the device, and every
   * instance holding a link of a lower generation has been told (it closes that link with
   * 4409). Rejects when that cannot be ensured (bus down, time-out): the link must not register.
   */
  claim(deviceId: string, generation: number): Promise<void>
  /** Called with every announcement of another claim this instance hears of. */
  onTakeover(handler: (deviceId: string, generation: number) => void): void
  /** This instance no longer holds a link of the device; resolves once the bus stopped routing it here. */
  release(deviceId: string): Promise<void>
  /** Closes the device's link, wherever it is. */
  disconnect(deviceId: string, code: number, reason: string): Promise<void>
  /** Tells every instance's watchers that bindings were removed; this instance's hear it before this returns. */
  bindingsRemoved(removal: BindingRemoval): void
  /** `watcher` hears every removal announced on any instance. */
  watchBindings(watcher: BindingWatcher): void
  close(): Promise<void>
}
