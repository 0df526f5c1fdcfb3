import type { FastifyBaseLogger } from 'fastify'
import type { DeviceLink } from '../../link/device-link.js'
import type { FirmwareStatusFrame } from '@fleetgate/device-agent/protocol'
import { nowSeconds } from '../../lib/time.js'
import { RETRY_SECONDS } from './rollout-offers.js'
import type { RolloutMetrics } from './rollout-metrics.js'
import type { ChangedMachine, RolloutRepository } from './rollout-repository.js'
import type { MachineState, ReportedState } from './rollout-states.js'

export interface RolloutReportsDeps {
  repo: RolloutRepository
  metrics: RolloutMetrics
  log: FastifyBaseLogger
  changed: (rolloutId: string, machine: ChangedMachine) => void
}

/** A report of the same state within this time only moves the progress: it is not written (nor announced). */
const PROGRESS_INTERVAL_S = 1

/**
 * The machines' `firmware-status` frames (§4 step 6). Reports of one machine are applied in the
 * order they arrived; each is a compare-and-set that applies only after an offer of that rollout
 * (on any of the machine's links) and before its install ended. `busy` puts the machine back to
 * waiting. Anything else is ignored and counted.
 */
export class RolloutReports {
  private readonly chains = new Map<string, Promise<void>>()
  /** The last report written per machine: state and time, to thin out progress. */
  private readonly written = new Map<string, { rolloutId: string; state: MachineState; at: number }>()

  constructor(private readonly deps: RolloutReportsDeps) {}

  take(link: DeviceLink, frame: FirmwareStatusFrame): void {
    const deviceId = link.deviceId
    const previous = this.chains.get(deviceId) ?? Promise.resolve()
    const next = previous.then(() => this.apply(deviceId, frame)).catch((err: unknown) => {
      this.deps.log.warn({ err, deviceId, rolloutId: frame.rollout_id }, 'firmware report not recorded')
    })
    this.chains.set(deviceId, next)
    void next.finally(() => {
      if (this.chains.get(deviceId) === next) this.chains.delete(deviceId)
    })
  }

  /** Resolves once every report received so far is applied (tests, shutdown). */
  async settled(): Promise<void> {
    await Promise.all([...this.chains.values()])
  }

  private async apply(deviceId: string, frame: FirmwareStatusFrame): Promise<void> {
    const state: ReportedState = frame.state === 'busy' ? 'waiting' : frame.state
    const now = nowSeconds()
    const last = this.written.get(deviceId)
    const progress = frame.progress ?? null
    if (last && last.rolloutId === frame.rollout_id && last.state === state && progress !== 100 && now - last.at < PROGRESS_INTERVAL_S) return
    const changed = await this.deps.repo.report(
      frame.rollout_id,
      frame.release_id,
      deviceId,
      { state, progress: state === 'waiting' ? null : progress, error: frame.error ?? null },
      RETRY_SECONDS,
    )
    if (!changed) {
      this.deps.metrics.ignoredReports.inc({ reason: 'not_offered_or_ended' })
      return
    }
    if (frame.state === 'busy') this.deps.metrics.busy.inc({ reason: 'declined' })
    if (state === 'installed' || state === 'failed') this.written.delete(deviceId)
    else this.written.set(deviceId, { rolloutId: frame.rollout_id, state, at: now })
    this.deps.changed(frame.rollout_id, changed)
  }
}
