import { AppError } from '../errors.js'
import type { DeviceAnswer, DeviceCall, DeviceRouting } from '../link/bus/device-bus.js'
import type { LeanHistogramChild } from '../metrics/lean-metrics.js'
import type { LinkMetrics } from '../link/link-metrics.js'


/** Sends calls to devices over the bus and records their duration by gateway route and outcome. */
export class DeviceClient {
  /** Duration histograms by route, then outcome: looked up once, not for every call. */
  private readonly durations = new Map<string, Map<string, LeanHistogramChild>>()

  constructor(
    private readonly bus: Pick<DeviceRouting, 'request'>,
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
    let byOutcome = this.durations.get(route)
    if (!byOutcome) this.durations.set(route, (byOutcome = new Map()))
    let duration = byOutcome.get(outcome)
    if (!duration) byOutcome.set(outcome, (duration = this.metrics.requestDuration.labels({ route, outcome })))
    duration.observe((performance.now() - started) / 1000)
  }
}
