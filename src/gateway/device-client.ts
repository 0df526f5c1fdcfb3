import { AppError } from '../errors.js'
import type { DeviceAnswer, DeviceBus, DeviceCall } from '../link/bus/device-bus.js'
import type { LinkMetrics } from '../link/link-metrics.js'

/** Sends calls to devices over the bus and records their duration by gateway route and outcome. */
export class DeviceClient {
  constructor(
    private readonly bus: DeviceBus,
    private readonly metrics: LinkMetrics,
    readonly timeoutMs: number,
  ) {}

  async call(deviceId: string, call: DeviceCall, route: string, timeoutMs = this.timeoutMs): Promise<DeviceAnswer> {
    const end = this.metrics.requestDuration.startTimer({ route })
    try {
      const answer = await this.bus.request(deviceId, call, timeoutMs)
      end({ outcome: answer.status < 400 ? 'answered' : 'device_error' })
      return answer
    } catch (err) {
      end({ outcome: err instanceof AppError ? String(err.code) : 'internal' })
      throw err
    }
  }
}
