import { AppError } from '../errors.js'
import type { DeviceAnswer, DeviceBus, DeviceCall } from '../link/bus/device-bus.js'
import type { LinkMetrics } from '../link/link-metrics.js'

type Labels = { route: string; outcome: string }

/** Sends calls to devices over the bus and records their duration by gateway route and outcome. */
export class DeviceClient {
  /** Label objects by route, then outcome: made once, not for every call. */
  private readonly labels = new Map<string, Map<string, Labels>>()

  constructor(
    private readonly bus: DeviceBus,
    private readonly metrics: LinkMetrics,
    readonly timeoutMs: number,
  ) {}

  async call(deviceId: string, call: DeviceCall, route: string, timeoutMs = this.timeoutMs): Promise<DeviceAnswer> {
    const started = performance.now()
    try {
      const answer = await this.bus.request(deviceId, call, timeoutMs)
      this.observe(route, answer.status < 400 ? 'answered' : 'device_error', started)
      return answer
    } catch (err) {
      this.observe(route, err instanceof AppError ? String(err.code) : 'internal', started)
      throw err
    }
  }

  private observe(route: string, outcome: string, started: number): void {
    let byOutcome = this.labels.get(route)
    if (!byOutcome) this.labels.set(route, (byOutcome = new Map()))
    let labels = byOutcome.get(outcome)
    if (!labels) byOutcome.set(outcome, (labels = { route, outcome }))
    this.metrics.requestDuration.observe(labels, (performance.now() - started) / 1000)
  }
}
