import type { RequestFrame, ResponseFrame } from '@fleetgate/device-agent/protocol'
import type { LinkHint, LiveState } from '../live-state.js'

/** A forwarded call as the bus carries it: a request frame without its type and id. */
export type DeviceCall = Omit<RequestFrame, 'type' | 'id'>

/** The device's answer: the status and data of its response frame. */
export type DeviceAnswer = Pick<ResponseFrame, 'status' | 'data'>

/** Reaching a device wherever it is linked: what the gateway's routes use. */
export interface DeviceRouting {
  /**
   * Forwards `call` and resolves with the device's answer. Rejects with an `AppError`:
   * `device_unavailable` (not linked, or the link closed), `server_busy` (64 in flight),
   * `device_timeout` (no answer within `timeoutMs`) or `service_unavailable` (the device is not
   * linked here and the other instances cannot be reached: NATS is down).
   */
  request(deviceId: string, call: DeviceCall, timeoutMs: number): Promise<DeviceAnswer>
  /** Live state of the devices linked anywhere; a device absent from the map is not linked. */
  live(devices: readonly LinkHint[]): Promise<Map<string, LiveState>>
  /**
   * How many devices whose id starts with `prefix` are linked and alive: here, and on each of
   * `holders` (other instances the database names as holders; one that does not answer counts
   * none). One question per instance, however many devices it holds.
   */
  aliveCount(prefix: string | undefined, holders: readonly string[]): Promise<number>
  /** Closes the device's link, wherever it is. */
  disconnect(deviceId: string, code: number, reason: string): Promise<void>
}

/** Which instance holds a device's link, and fencing out older links: what the link server uses. */
export interface LinkOwnership {
  /** This instance's id, recorded as the holder of the links it accepts. */
  readonly instanceId: string
  /**
   * Other instances may claim devices too (several instances share the database). When false,
   * every claim goes through this process, so a claim needs no read-back of the generations.
   */
  readonly sharedWithOtherInstances: boolean
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
}

/**
 * "Send this request to device X and await the answer", wherever X is linked, and who holds
 * X's link. One implementation per deployment, picked in `create-device-bus.ts`: in-process
 * (one instance) or NATS (several instances). Callers take the part they use.
 */
export interface DeviceBus extends DeviceRouting, LinkOwnership {
  close(): Promise<void>
}
