import type { FastifyBaseLogger } from 'fastify'
import type { EventBus } from '../../events/event-bus.js'
import type { FleetEvent } from '../../fleet-event.js'
import { activateRelease, findReleaseSummary } from '../../firmware/release-repository.js'
import { PeriodicTask } from '../../lib/periodic-task.js'
import { writeAudit } from '../../storage/audit-repository.js'
import type { Db } from '../../storage/storage.js'
import { inTransaction } from '../../storage/transaction.js'
import { releaseEvent } from '../releases/release-event.js'
import { rolloutDeviceEvent, rolloutEvent } from './rollout-events.js'
import type { RolloutMetrics } from './rollout-metrics.js'
import type { OfferedRelease, RolloutOffers } from './rollout-offers.js'
import type { ChangedMachine, RolloutRepository, RolloutRow } from './rollout-repository.js'
import { gateReadiness, gateVerdict, type GateState, type KpiGate } from './kpi-gate.js'
import type { PauseReason } from './pause-reasons.js'
import { emptyCounts, ENDED_STATES, type MachineState, type RolloutCounts, type RolloutState } from './rollout-states.js'

export interface RolloutEngineDeps {
  db: Db
  repo: RolloutRepository
  offers: RolloutOffers
  events: EventBus<FleetEvent>
  log: FastifyBaseLogger
  metrics: RolloutMetrics
  stepTimeoutSeconds: number
}

/** Counts are announced at most this often (§11). */
const COUNTS_INTERVAL_S = 1
/** Machines of aborted rollouts are checked for silence every this many passes (they are rare; the check costs a statement). */
const ABORTED_CHECK_EVERY = 10
/** An offer unanswered this long by a machine that linked again since is presumed lost with the old link. */
const UNANSWERED_OFFER_S = 10
/** This instance checks the KPI gate of a waiting stage at most this often (each check reads every installed machine's placements). */
const GATE_CHECK_INTERVAL_S = 1
/** Who the audit names for decisions the rollout takes by itself. */
export const ROLLOUT_ACTOR = 'fleetgate-rollouts'

/**
 * Drives the active rollout on every instance, each pass: fail machines silent past the step
 * time-out, end the open stage (pause on too many failures, soak, open the next, complete),
 * offer the release to waiting machines linked here, announce changed counts. Each decision is a
 * compare-and-set in the database, so whichever instance gets there first takes it, once, and
 * raises its events; a restart loses nothing.
 */
export class RolloutEngine {
  private readonly task: PeriodicTask
  private release: OfferedRelease | undefined
  private passes = 0
  private gateChecked: { key: string; at: number } | undefined

  constructor(private readonly deps: RolloutEngineDeps) {
    this.task = new PeriodicTask(
      () => this.pass(),
      (err) => {
        deps.metrics.passFailures.inc()
        deps.log.warn({ err }, 'rollout pass failed')
      },
    )
  }

  start(intervalMs: number): void {
    this.task.start(intervalMs, { immediately: true })
  }

  /** Something changed (a creation, a resume): pass now rather than at the next tick. */
  nudge(): void {
    this.task.runSoon()
  }

  stop(): Promise<void> {
    return this.task.stop()
  }

  /** One machine's state changed: its `rollout-device` event. */
  machineChanged(rolloutId: string, machine: ChangedMachine): void {
    this.deps.events.publish(
      rolloutDeviceEvent({
        rollout_id: rolloutId,
        device_id: machine.device_id,
        stage: Number(machine.stage),
        state: machine.state,
        progress: machine.progress === null ? null : Number(machine.progress),
        error: machine.error,
      }),
    )
    // A machine that ended may end its stage: decide now rather than at the next tick.
    if (machine.state === 'installed' || machine.state === 'failed') this.task.runSoon()
  }

  /** The rollout's `rollout` event with its current counts. */
  announce(row: RolloutRow, counts: RolloutCounts, state = row.state, stage = Number(row.stage)): void {
    const gate = (row.gate_state as GateState | null) ?? null
    const pause_reason = state === 'paused' ? ((row.pause_reason as PauseReason | null) ?? 'manual') : null
    this.deps.events.publish(rolloutEvent({ rollout_id: row.rollout_id, release_id: row.release_id, state, stage, counts, gate, pause_reason }))
  }

  private async pass(): Promise<void> {
    const { repo } = this.deps
    const checkAborted = this.passes++ % ABORTED_CHECK_EVERY === 0
    const rollout = await repo.findActive()
    // An idle fleet costs one statement a pass: nothing to decide, no time needed.
    if (!rollout && !checkAborted) return
    // One time for the whole pass, the database's: other instances compare what it writes.
    const now = await repo.clock.read(this.deps.db)
    if (checkAborted) {
      for (const machine of await repo.failSilentAfterAbort(now - this.deps.stepTimeoutSeconds, now, this.silenceError())) this.machineChanged(machine.rollout_id, machine)
    }
    if (!rollout) return
    const silent = await repo.failSilent(rollout.rollout_id, now - this.deps.stepTimeoutSeconds, now, this.silenceError())
    for (const machine of silent) this.machineChanged(rollout.rollout_id, machine)
    const tally = await repo.tally(rollout.rollout_id)
    const counts = countsOf(tally)
    let current = rollout
    if (rollout.state === 'running') current = (await this.decide(rollout, tally, counts, now)) ?? rollout
    if (current.state === 'running') {
      const lost = await repo.requeueUnanswered(current.rollout_id, now - UNANSWERED_OFFER_S, now)
      for (const machine of lost) this.machineChanged(current.rollout_id, machine)
      await this.deps.offers.offerDue(current, await this.releaseOf(current), now)
    }
    await this.announceCounts(current, counts, now)
  }

  private silenceError(): string {
    return `no report for ${this.deps.stepTimeoutSeconds} s`
  }

  /** Ends the open stage when every machine of it ended; returns the rollout as it is after the decision. */
  private async decide(rollout: RolloutRow, tally: Tally, counts: RolloutCounts, now: number): Promise<RolloutRow | undefined> {
    const { repo } = this.deps
    const id = rollout.rollout_id
    const stage = Number(rollout.stage)
    const stages = JSON.parse(rollout.stages) as number[]
    const open = tally.filter((t) => t.stage <= stage && !ENDED_STATES.includes(t.state)).reduce((n, t) => n + t.n, 0)
    if (open > 0) return undefined
    const size = tally.filter((t) => t.stage === stage).reduce((n, t) => n + t.n, 0)
    const failed = tally.filter((t) => t.stage === stage && t.state === 'failed').reduce((n, t) => n + t.n, 0)
    if (stage >= Number(rollout.check_failures_from) && size > 0 && failed / size > Number(rollout.max_failure_ratio)) {
      // The pause and its audit record commit together.
      const paused = await inTransaction(this.deps.db, async (trx) => {
        if (!(await repo.in(trx).pauseAtStage(id, stage, now, 'failures'))) return false
        await writeAudit(trx, {
          actor: ROLLOUT_ACTOR,
          action: 'rollout.pause',
          outcome: 'failure_threshold',
          release_id: rollout.release_id,
          detail: { rollout_id: id, stage, pause_reason: 'failures', failed, stage_size: size, max_failure_ratio: Number(rollout.max_failure_ratio) },
        })
        return true
      })
      if (!paused) return undefined
      this.deps.log.warn({ rolloutId: id, stage, failed, size }, 'rollout paused: too many machines failed')
      const pausedRow: RolloutRow = { ...rollout, state: 'paused', pause_reason: 'failures' }
      this.announce(pausedRow, counts)
      return pausedRow
    }
    let ended = rollout
    if (rollout.stage_ended_at === null) {
      await repo.markStageEnded(id, stage, now)
      ended = { ...rollout, stage_ended_at: now }
    }
    const gate = await this.kpiGate(ended, stage, stages, counts, now)
    if (gate === 'wait') return undefined
    if (gate !== 'open') return gate
    return this.advanceAfterSoak(ended, stages, counts, now)
  }

  /**
   * The KPI gate of the ended stage (§16), before the next stage opens: 'open' when there is none
   * (no gate, the last stage, a stage accepted by a resume) or it passed; 'wait' while it waits for
   * placements (checked at most every GATE_CHECK_INTERVAL_S by this instance) or another instance
   * decided first; the paused rollout on a regression. Passing and pausing are compare-and-sets
   * from `waiting` (or nothing yet), so one verdict is taken once; the pause commits with its audit record.
   */
  private async kpiGate(rollout: RolloutRow, stage: number, stages: number[], counts: RolloutCounts, now: number): Promise<'open' | 'wait' | RolloutRow> {
    const { repo } = this.deps
    const id = rollout.rollout_id
    if (rollout.kpi_gate === null || stage >= stages.length - 1 || stage < Number(rollout.check_failures_from)) return 'open'
    if (rollout.gate_state === 'passed') return 'open'
    if (this.gateChecked?.key === `${id}/${stage}` && now - this.gateChecked.at < GATE_CHECK_INTERVAL_S) return 'wait'
    this.gateChecked = { key: `${id}/${stage}`, at: now }
    const gate = JSON.parse(rollout.kpi_gate) as KpiGate
    const readiness = gateReadiness(gate, await repo.installedPlacements(id, stage), now - Number(rollout.stage_ended_at))
    if (readiness.kind === 'waiting') {
      if (await repo.setGateState(id, stage, 'waiting', now)) this.announce({ ...rollout, gate_state: 'waiting' }, counts)
      return 'wait'
    }
    const compared = await Promise.all(
      readiness.counted.map(async (m) => ({ after: m.after, before: await repo.placementsBefore(m.device_id, m.offered_at, m.after.placed + m.after.missed) })),
    )
    const verdict = gateVerdict(gate, compared)
    if (verdict.kind === 'passed') {
      if (!(await repo.setGateState(id, stage, 'passed', now))) return 'wait'
      this.announce({ ...rollout, gate_state: 'passed' }, counts)
      return 'open'
    }
    const paused = await inTransaction(this.deps.db, async (trx) => {
      if (!(await repo.in(trx).pauseAtStage(id, stage, now, 'kpi_regression'))) return false
      await writeAudit(trx, {
        actor: ROLLOUT_ACTOR,
        action: 'rollout.pause',
        outcome: 'kpi_regression',
        release_id: rollout.release_id,
        detail: {
          rollout_id: id,
          stage,
          pause_reason: 'kpi_regression',
          machines: verdict.counted,
          miss_rate_before: verdict.before_rate,
          miss_rate_after: verdict.after_rate,
          max_miss_rate_increase: gate.max_miss_rate_increase,
        },
      })
      return true
    })
    if (!paused) return 'wait'
    this.deps.log.warn({ rolloutId: id, stage, before: verdict.before_rate, after: verdict.after_rate }, 'rollout paused: the miss rate rose after installing')
    const pausedRow: RolloutRow = { ...rollout, state: 'paused', pause_reason: 'kpi_regression', gate_state: 'regression' }
    this.announce(pausedRow, counts)
    return pausedRow
  }

  private async advanceAfterSoak(rollout: RolloutRow, stages: number[], counts: RolloutCounts, now: number): Promise<RolloutRow | undefined> {
    const id = rollout.rollout_id
    const stage = Number(rollout.stage)
    if (now < Number(rollout.stage_ended_at) + Number(rollout.soak_seconds)) return undefined
    if (stage >= stages.length - 1) {
      const completed = await this.complete(rollout, stage, now)
      if (!completed) return undefined
      this.announce(rollout, counts, 'completed')
      return { ...rollout, state: 'completed' }
    }
    const opened = await this.deps.repo.openNextStage(id, stage, now)
    if (!opened) return undefined
    const next = { ...rollout, stage: stage + 1, stage_ended_at: null, gate_state: null }
    const moved = { ...counts, pending: counts.pending - opened.length, waiting: counts.waiting + opened.length }
    this.announce(next, moved)
    for (const machine of opened) this.machineChanged(id, machine)
    return next
  }

  /**
   * Completes the rollout: the decision, the release becoming the active one (§6) and their audit
   * records commit together or not at all (a failure leaves the rollout running, and a later pass
   * decides again). Events follow the commit. False when another decision came first.
   */
  private async complete(rollout: RolloutRow, stage: number, now: number): Promise<boolean> {
    const { db, events, repo } = this.deps
    const detail = { rollout_id: rollout.rollout_id }
    const outcome = await inTransaction(db, async (trx) => {
      if (!(await repo.in(trx).complete(rollout.rollout_id, stage, now))) return undefined
      const activated = await activateRelease(trx, rollout.release_id)
      const release_id = rollout.release_id
      await writeAudit(trx, { actor: ROLLOUT_ACTOR, action: 'rollout.complete', outcome: activated ? 'completed' : 'release_missing', release_id, detail })
      if (activated) await writeAudit(trx, { actor: ROLLOUT_ACTOR, action: 'firmware.activate', outcome: 'activated', release_id, detail })
      return { activated }
    })
    if (!outcome) return false
    if (outcome.activated) {
      for (const old of outcome.activated.deactivated) events.publish(releaseEvent(old.release_id, old.display_version, false, 'deactivated'))
      events.publish(releaseEvent(rollout.release_id, outcome.activated.display_version, true, 'activated'))
    }
    return true
  }

  /** A `rollout` event when the counts changed, at most once a second, by one instance. */
  private async announceCounts(rollout: RolloutRow, counts: RolloutCounts, now: number): Promise<void> {
    const text = JSON.stringify(counts)
    if (text === rollout.counts || now - Number(rollout.counts_at) < COUNTS_INTERVAL_S) return
    if (await this.deps.repo.announceCounts(rollout.rollout_id, rollout.counts, text, now)) this.announce(rollout, counts)
  }

  private async releaseOf(rollout: RolloutRow): Promise<OfferedRelease> {
    if (this.release?.release_id === rollout.release_id) return this.release
    const release = await findReleaseSummary(this.deps.db, rollout.release_id)
    if (!release) throw new Error(`release ${rollout.release_id} of rollout ${rollout.rollout_id} is gone`)
    this.release = release
    return release
  }
}

type Tally = { stage: number; state: MachineState; n: number }[]

export function countsOf(tally: Tally): RolloutCounts {
  const counts = emptyCounts()
  for (const t of tally) counts[t.state] += t.n
  return counts
}
