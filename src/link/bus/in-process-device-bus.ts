import { randomUUID } from 'node:crypto'
import { requestFrameFields } from '@fleetgate/device-agent/protocol'
import { unavailable } from '../device-link.js'
import type { LinkRegistry } from '../link-registry.js'
import type { LinkHint, LiveState } from '../live-state.js'
import type { DeviceAnswer, DeviceBus, DeviceCall } from './device-bus.js'

/** One instance: every device the gateway can reach is linked to this process. */
export class InProcessDeviceBus implements DeviceBus {
  readonly instanceId: string
  readonly sharedWithOtherInstances = false

  constructor(
    private readonly registry: LinkRegistry,
    private readonly aliveMs: number,
    instanceId: string = randomUUID(),
  ) {
    this.instanceId = instanceId
  }

  request(deviceId: string, call: DeviceCall, timeoutMs: number): Promise<DeviceAnswer> {
    return this.requestFields(deviceId, requestFrameFields(call), timeoutMs)
  }

  /** `request` with the call written as its frame's fields (`requestFrameFields`), as another instance sends it. */
  requestFields(deviceId: string, fields: string, timeoutMs: number): Promise<DeviceAnswer> {
    const link = this.registry.get(deviceId)
    if (!link) return Promise.reject(unavailable(deviceId))
    return link.requestFields(fields, timeoutMs)
  }

  async live(devices: readonly LinkHint[]): Promise<Map<string, LiveState>> {
    return this.localLive(devices.map((d) => d.device_id))
  }

  async aliveCount(prefix: string | undefined): Promise<number> {
    return this.registry.countAlive(this.aliveMs, prefix)
  }

  /** Snapshots of the given devices linked to this process. */
  localLive(deviceIds: readonly string[]): Map<string, LiveState> {
    const result = new Map<string, LiveState>()
    for (const id of deviceIds) {
      const link = this.registry.get(id)
      if (link) result.set(id, link.snapshot(this.aliveMs))
    }
    return result
  }

  /** One instance: the link server sees every claim itself. */
  async claim(): Promise<void> {}

  onTakeover(): void {}

  async release(): Promise<void> {}

  async disconnect(deviceId: string, code: number, reason: string): Promise<void> {
    this.registry.get(deviceId)?.close(code, reason)
  }

  async close(): Promise<void> {}
}
