import { randomBytes } from 'node:crypto'
import type { Static } from '@sinclair/typebox'
import { AppError } from '../../errors.js'
import { findReleaseSummary } from '../../firmware/release-repository.js'
import { writeAudit } from '../../storage/audit-repository.js'
import type { Db } from '../../storage/storage.js'
import { inTransaction } from '../../storage/transaction.js'
import type { DeviceRepository } from '../devices/device-repository.js'
import type { SelectorConditions } from '../labels/selector-conditions.js'
import type { RolloutEngine } from './rollout-engine.js'
import { rolloutView, type Rollout, type RolloutRepository, type RolloutRow } from './rollout-repository.js'
import { CreateRolloutBody, DEFAULT_MAX_FAILURE_RATIO, DEFAULT_STAGES, MAX_TARGETED } from './rollout-schemas.js'
import { ROLLOUT_MOVES } from './rollout-states.js'
import { KPI_GATE_DEFAULTS } from './kpi-gate.js'
import { stableOrder, stageOfPositions, stagesMessage } from './stage-membership.js'

export interface RolloutServiceDeps {
  db: Db
  repo: RolloutRepository
  devices: DeviceRepository
  engine: RolloutEngine
  selectors: SelectorConditions
}

/** What an administrator may do to a rollout (§14), each a transition of rollout-states.ts. */
const ACTIONS = { pause: ROLLOUT_MOVES.pause, resume: ROLLOUT_MOVES.resume, abort: ROLLOUT_MOVES.abort } as const
export type RolloutAction = keyof typeof ACTIONS

/** The administrators' side of rollouts (contract §14): create, pause, resume, abort, read. */
export class RolloutService {
  constructor(private readonly deps: RolloutServiceDeps) {}

  async create(body: Static<typeof CreateRolloutBody>, actor: string): Promise<Rollout> {
    const { repo, engine } = this.deps
    const stages = body.stages ?? DEFAULT_STAGES
    const problem = stagesMessage(stages)
    if (problem) throw new AppError('bad_request', problem)
    const release = await findReleaseSummary(this.deps.db, body.release_id)
    if (!release) throw new AppError('not_found', `No release ${body.release_id}`)
    const kpiGate = body.kpi_gate === undefined ? null : { ...KPI_GATE_DEFAULTS, ...body.kpi_gate }
    const targets = await this.targets(body)
    if (await repo.findActive()) throw activeConflict()
    const rolloutId = `ro-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`
    const order = stableOrder(rolloutId, targets)
    const stageOf = stageOfPositions(stages, order.length)
    // The rollout and its audit record commit together.
    const row = await inTransaction(this.deps.db, async (trx) => {
      const created = await repo.in(trx).create({
        rollout_id: rolloutId,
        release_id: release.release_id,
        display_version: release.display_version,
        stages,
        max_failure_ratio: body.max_failure_ratio ?? DEFAULT_MAX_FAILURE_RATIO,
        soak_seconds: body.soak_seconds ?? 0,
        created_by: actor,
        selector: body.selector ?? null,
        kpi_gate: kpiGate,
        machines: order.map((device_id, i) => ({ device_id, stage: stageOf[i]! })),
        now: await repo.clock.read(trx),
      })
      if (!created) return undefined
      await writeAudit(trx, {
        actor,
        action: 'rollout.create',
        outcome: 'created',
        release_id: release.release_id,
        detail: { rollout_id: rolloutId, targeted: order.length, ...(body.selector !== undefined ? { selector: body.selector } : {}), stages, max_failure_ratio: Number(created.max_failure_ratio), soak_seconds: Number(created.soak_seconds), ...(kpiGate ? { kpi_gate: kpiGate } : {}) },
      })
      return created
    })
    if (!row) throw activeConflict()
    const rollout = await this.view(row)
    engine.announce(row, rollout.counts)
    engine.nudge()
    return rollout
  }

  async act(rolloutId: string, action: RolloutAction, actor: string): Promise<Rollout> {
    const { repo, engine } = this.deps
    const row = await this.find(rolloutId)
    const move = ACTIONS[action]
    // A resume accepts the failures of the open stage: only stages opened after it are checked again (§14).
    // The same holds for the KPI gate of the open stage. A pause by hand is `manual`.
    const extra = action === 'resume' ? { check_failures_from: Number(row.stage) + 1 } : action === 'pause' ? { pause_reason: 'manual' as const } : {}
    // The transition and its audit record commit together.
    const moved = await inTransaction(this.deps.db, async (trx) => {
      if (!(await repo.in(trx).transition(rolloutId, move, await repo.clock.read(trx), extra))) return false
      await writeAudit(trx, { actor, action: `rollout.${action}`, outcome: move.to, release_id: row.release_id, detail: { rollout_id: rolloutId, stage: Number(row.stage) } })
      return true
    })
    if (!moved) {
      const current = (await repo.find(rolloutId))?.state ?? row.state
      throw new AppError('conflict', `Rollout ${rolloutId} is ${current}: it cannot ${action}`, { state: current })
    }
    const rollout = await this.view(await this.find(rolloutId))
    engine.announce({ ...row, pause_reason: rollout.pause_reason, gate_state: rollout.gate }, rollout.counts, rollout.state, rollout.stage)
    if (move.to === 'running') engine.nudge()
    return rollout
  }

  async get(rolloutId: string): Promise<Rollout> {
    return this.view(await this.find(rolloutId))
  }

  async list(limit: number, before?: string): Promise<{ rollouts: Rollout[]; next_before?: string }> {
    const { rows, next_before } = await this.deps.repo.list(limit, before)
    const counts = await this.deps.repo.counts(rows.map((r) => r.rollout_id))
    const rollouts = rows.map((row) => rolloutView(row, counts.get(row.rollout_id)!))
    return next_before === undefined ? { rollouts } : { rollouts, next_before }
  }

  private async find(rolloutId: string): Promise<RolloutRow> {
    const row = await this.deps.repo.find(rolloutId)
    if (!row) throw new AppError('not_found', `No rollout ${rolloutId}`)
    return row
  }

  private async view(row: RolloutRow): Promise<Rollout> {
    const counts = await this.deps.repo.counts([row.rollout_id])
    return rolloutView(row, counts.get(row.rollout_id)!)
  }

  /** The machines to target: those named (each known, once), those the selector matches now, or every known machine. */
  private async targets({ devices: named, selector }: Static<typeof CreateRolloutBody>): Promise<string[]> {
    if (named !== undefined && selector !== undefined) throw new AppError('bad_request', 'Give devices or selector, not both')
    if (selector !== undefined) {
      const matching = await this.deps.devices.idsWhere(this.deps.selectors.condition(selector), MAX_TARGETED + 1)
      if (matching.length === 0) throw new AppError('bad_request', `The selector matches no machine: ${selector}`, { selector })
      if (matching.length > MAX_TARGETED) throw new AppError('bad_request', `The selector matches more than ${MAX_TARGETED} machines`, { selector })
      return matching
    }
    if (named === undefined) {
      const all = [...(await this.deps.devices.knownIds())]
      if (all.length === 0) throw new AppError('bad_request', 'There are no machines to target')
      return all
    }
    const unique = new Set(named)
    if (unique.size !== named.length) throw new AppError('bad_request', 'A machine is listed more than once in devices')
    const known = await this.deps.devices.knownIds(named)
    const unknown = named.filter((id) => !known.has(id))
    if (unknown.length > 0) {
      throw new AppError('bad_request', `Unknown machines: ${unknown.slice(0, 10).join(', ')}${unknown.length > 10 ? ` and ${unknown.length - 10} more` : ''}`, {
        unknown_devices: unknown.slice(0, 100),
      })
    }
    return named.slice()
  }
}

const activeConflict = () => new AppError('conflict', 'Another rollout is running or paused: finish or abort it first')
