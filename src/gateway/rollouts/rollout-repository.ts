import type { Static } from '@sinclair/typebox'
import { sql, type ExpressionBuilder, type Selectable } from 'kysely'
import { AppError } from '../../errors.js'
import type { DatabaseClock } from '../../storage/database-clock.js'
import { pageWithCursor } from '../../storage/paging.js'
import type { Database } from '../../storage/database.js'
import type { Db } from '../../storage/storage.js'
import { inTransaction } from '../../storage/transaction.js'
import type { GateState, InstalledMachine, KpiGate } from './kpi-gate.js'
import type { PauseReason } from './pause-reasons.js'
import type { Rollout as RolloutSchema } from './rollout-schemas.js'
import {
  emptyCounts,
  MACHINE_MOVES,
  MACHINE_STATES,
  reportTransition,
  ROLLOUT_MOVES,
  type MachineState,
  type MachineTransition,
  type ReportedState,
  type RolloutCounts,
  type RolloutState,
  type RolloutTransition,
} from './rollout-states.js'

export type RolloutRow = Omit<Selectable<Database['rollouts']>, 'state'> & { state: RolloutState }
export type RolloutDeviceRow = Omit<Selectable<Database['rollout_devices']>, 'state'> & { state: MachineState }

/** A rollout as the API answers it (contract §14). */
export type Rollout = Static<typeof RolloutSchema>

export interface NewRollout {
  rollout_id: string
  release_id: string
  display_version: string
  stages: number[]
  max_failure_ratio: number
  soak_seconds: number
  created_by: string
  /** The selector the machines were resolved from (§15), recorded as given. */
  selector?: string | null
  /** The KPI gate (§16), if any. */
  kpi_gate?: KpiGate | null
  /** Machine ids in the rollout's stable order, with the stage of each. */
  machines: { device_id: string; stage: number }[]
  now: number
}

/** One machine's row changed by a decision: what its `rollout-device` event says. */
export type ChangedMachine = Pick<RolloutDeviceRow, 'device_id' | 'stage' | 'state' | 'progress' | 'error'>

type RolloutStateColumn = { state: RolloutState }
type MachineStateColumn = { state: MachineState }

const INSERT_CHUNK = 500
/** Events read at a time when walking a machine's placements back from its offer. */
const PLACEMENTS_PAGE = 200

const CHANGED_COLUMNS = ['device_id', 'stage', 'state', 'progress', 'error'] as const

/**
 * Rollouts in the database: every decision (stage changes, pauses, offers, reports) is a
 * compare-and-set UPDATE that names the state it leaves (a transition of rollout-states.ts), so
 * it is taken once however many instances try it at once (§13, §14). Times are the database's
 * clock: `now` arguments come from `DatabaseClock.read`, and writes of one machine's times use
 * its expression (docs/coordination.md).
 */
export class RolloutRepository {
  constructor(
    private readonly db: Db,
    readonly clock: DatabaseClock,
  ) {}

  /** The same repository inside a transaction, so a decision commits with its consequences. */
  in(trx: Db): RolloutRepository {
    return new RolloutRepository(trx, this.clock)
  }

  /** Inserts the rollout and its machines; the first stage's machines wait for an offer. Undefined when another rollout is active. */
  async create(r: NewRollout): Promise<RolloutRow | undefined> {
    return inTransaction(this.db, async (trx) => {
      const row = await trx
        .insertInto('rollouts')
        .values({
          rollout_id: r.rollout_id,
          release_id: r.release_id,
          display_version: r.display_version,
          state: 'running',
          active_slot: 1,
          stage: 0,
          stages: JSON.stringify(r.stages),
          max_failure_ratio: r.max_failure_ratio,
          soak_seconds: r.soak_seconds,
          targeted: r.machines.length,
          check_failures_from: 0,
          stage_opened_at: r.now,
          stage_ended_at: null,
          counts: JSON.stringify(emptyCounts()),
          counts_at: 0,
          created_at: r.now,
          created_by: r.created_by,
          selector: r.selector ?? null,
          kpi_gate: r.kpi_gate ? JSON.stringify(r.kpi_gate) : null,
          gate_state: null,
          pause_reason: null,
          updated_at: r.now,
        })
        .onConflict((oc) => oc.column('active_slot').doNothing())
        .returningAll()
        .$narrowType<RolloutStateColumn>()
        .executeTakeFirst()
      if (!row) return undefined
      for (let i = 0; i < r.machines.length; i += INSERT_CHUNK) {
        const values = r.machines.slice(i, i + INSERT_CHUNK).map((m, j) => ({
          rollout_id: r.rollout_id,
          device_id: m.device_id,
          position: i + j,
          stage: m.stage,
          state: m.stage === 0 ? 'waiting' : 'pending',
          progress: null,
          error: null,
          offered_at: null,
          last_report_at: null,
          next_try_at: 0,
          updated_at: r.now,
        }))
        await trx.insertInto('rollout_devices').values(values).execute()
      }
      const perStage = new Map<number, number>()
      for (const m of r.machines) perStage.set(m.stage, (perStage.get(m.stage) ?? 0) + 1)
      const tallies = [...perStage].flatMap(([stage, n]) =>
        MACHINE_STATES.map((state) => ({ rollout_id: r.rollout_id, stage, state, n: state === (stage === 0 ? 'waiting' : 'pending') ? n : 0 })),
      )
      for (let i = 0; i < tallies.length; i += INSERT_CHUNK) await trx.insertInto('rollout_tallies').values(tallies.slice(i, i + INSERT_CHUNK)).execute()
      return row
    })
  }

  find(rolloutId: string): Promise<RolloutRow | undefined> {
    return this.db.selectFrom('rollouts').selectAll().where('rollout_id', '=', rolloutId).$narrowType<RolloutStateColumn>().executeTakeFirst()
  }

  /** The running or paused rollout, if any. */
  findActive(): Promise<RolloutRow | undefined> {
    return this.db.selectFrom('rollouts').selectAll().where('active_slot', '=', 1).$narrowType<RolloutStateColumn>().executeTakeFirst()
  }

  /** Newest first; `before` is the rollout id the previous page ended with. */
  async list(limit: number, before?: string): Promise<{ rows: RolloutRow[]; next_before?: string }> {
    let query = this.db.selectFrom('rollouts').selectAll().$narrowType<RolloutStateColumn>().orderBy('created_at', 'desc').orderBy('rollout_id', 'desc').limit(limit + 1)
    if (before !== undefined) {
      const cursor = await this.find(before)
      if (!cursor) throw new AppError('bad_request', 'Unknown cursor')
      query = query.where((eb) =>
        eb.or([
          eb('created_at', '<', cursor.created_at),
          eb.and([eb('created_at', '=', cursor.created_at), eb('rollout_id', '<', cursor.rollout_id)]),
        ]),
      )
    }
    const { rows, next } = pageWithCursor(await query.execute(), limit, (row) => row.rollout_id)
    return next === undefined ? { rows } : { rows, next_before: next }
  }

  /** Machines of a rollout in stage order; `after` is the machine id the previous page ended with. */
  async machines(rolloutId: string, limit: number, after?: string): Promise<{ rows: RolloutDeviceRow[]; next_after?: string }> {
    let query = this.db.selectFrom('rollout_devices').selectAll().$narrowType<MachineStateColumn>().where('rollout_id', '=', rolloutId).orderBy('position').limit(limit + 1)
    if (after !== undefined) {
      const cursor = await this.db
        .selectFrom('rollout_devices')
        .select('position')
        .where('rollout_id', '=', rolloutId)
        .where('device_id', '=', after)
        .executeTakeFirst()
      if (!cursor) throw new AppError('bad_request', 'Unknown cursor')
      query = query.where('position', '>', cursor.position)
    }
    const { rows, next } = pageWithCursor(await query.execute(), limit, (row) => row.device_id)
    return next === undefined ? { rows } : { rows, next_after: next }
  }

  /** Machines per stage and state. */
  async tally(rolloutId: string): Promise<{ stage: number; state: MachineState; n: number }[]> {
    const rows = await this.db
      .selectFrom('rollout_tallies')
      .select(['stage', 'state', 'n'])
      .where('rollout_id', '=', rolloutId)
      .where('n', '>', 0)
      .$narrowType<MachineStateColumn>()
      .execute()
    return rows.map((r) => ({ stage: Number(r.stage), state: r.state, n: Number(r.n) }))
  }

  /** Counts per state of each rollout. */
  async counts(rolloutIds: readonly string[]): Promise<Map<string, RolloutCounts>> {
    const result = new Map(rolloutIds.map((id) => [id, emptyCounts()]))
    if (rolloutIds.length === 0) return result
    const rows = await this.db
      .selectFrom('rollout_tallies')
      .select(['rollout_id', 'state', (eb) => eb.fn.sum<number>('n').as('n')])
      .where('rollout_id', 'in', rolloutIds)
      .groupBy(['rollout_id', 'state'])
      .$narrowType<MachineStateColumn>()
      .execute()
    for (const row of rows) result.get(row.rollout_id)![row.state] = Number(row.n)
    return result
  }

  /**
   * Takes a rollout transition; false when the rollout was not in a state it leaves (another
   * decision came first). A pause records its reason (`manual` unless given); any other move clears it.
   */
  async transition(rolloutId: string, move: RolloutTransition, now: number, extra: { check_failures_from?: number; pause_reason?: PauseReason } = {}): Promise<boolean> {
    const active = move.to === 'running' || move.to === 'paused'
    const { pause_reason = 'manual', ...rest } = extra
    const result = await this.db
      .updateTable('rollouts')
      .set({ state: move.to, active_slot: active ? 1 : null, updated_at: now, pause_reason: move.to === 'paused' ? pause_reason : null, ...rest })
      .where('rollout_id', '=', rolloutId)
      .where('state', 'in', move.from)
      .executeTakeFirst()
    return result.numUpdatedRows > 0n
  }

  /** Completes a running rollout at stage `stage`; false when another decision came first. */
  complete(rolloutId: string, stage: number, now: number): Promise<boolean> {
    return this.decideAtStage(rolloutId, stage, ROLLOUT_MOVES.complete, { updated_at: now, pause_reason: null })
  }

  /** Pauses a running rollout at stage `stage` (too many failed, or its KPI gate found a regression); false when another decision came first. */
  pauseAtStage(rolloutId: string, stage: number, now: number, reason: Exclude<PauseReason, 'manual'>): Promise<boolean> {
    return this.decideAtStage(rolloutId, stage, ROLLOUT_MOVES.pause, { updated_at: now, pause_reason: reason, ...(reason === 'kpi_regression' ? { gate_state: 'regression' as const } : {}) })
  }

  /**
   * Records what the KPI gate of the ended stage `stage` is doing, a compare-and-set from the gate
   * states that may lead there (GATE_TRANSITIONS); true when this call changed it (every instance
   * may compute the same; the one whose write took announces it).
   */
  async setGateState(rolloutId: string, stage: number, state: GateState, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable('rollouts')
      .set({ gate_state: state, updated_at: now })
      .where('rollout_id', '=', rolloutId)
      .where('stage', '=', stage)
      .where('state', '=', 'running')
      .where((eb) => gateLeaving(eb, GATE_TRANSITIONS[state]))
      .executeTakeFirst()
    return result.numUpdatedRows > 0n
  }

  /**
   * The installed machines of stage `stage`: placed and missed of their `placements` events from
   * their `installed` report on, and whether they reported any before their offer. One statement.
   */
  async installedPlacements(rolloutId: string, stage: number): Promise<InstalledMachine[]> {
    const { rows } = await sql<{ device_id: string; offered_at: number; placed: unknown; missed: unknown; placed_before: unknown }>`
      select d.device_id, d.offered_at,
        (select coalesce(sum(e.placed), 0) from production_events e where e.device_id = d.device_id and e.kind = 'placements' and e.ts >= d.installed_at) as placed,
        (select coalesce(sum(e.missed), 0) from production_events e where e.device_id = d.device_id and e.kind = 'placements' and e.ts >= d.installed_at) as missed,
        case when exists (select 1 from production_events e where e.device_id = d.device_id and e.kind = 'placements' and e.ts < d.offered_at) then 1 else 0 end as placed_before
      from rollout_devices d
      where d.rollout_id = ${rolloutId} and d.stage = ${stage} and d.state = 'installed' and d.installed_at is not null and d.offered_at is not null`.execute(this.db)
    return rows.map((r) => ({
      device_id: r.device_id,
      offered_at: Number(r.offered_at),
      after: { placed: Number(r.placed), missed: Number(r.missed) },
      placedBefore: Number(r.placed_before) === 1,
    }))
  }

  /**
   * Placed and missed of one machine's `placements` events just before `offeredAt`, newest first,
   * until they add up to at least `placements` (or there are no more).
   */
  async placementsBefore(deviceId: string, offeredAt: number, placements: number): Promise<{ placed: number; missed: number }> {
    const counts = { placed: 0, missed: 0 }
    let cursor: { ts: number; event_id: string } | undefined
    for (;;) {
      let query = this.db
        .selectFrom('production_events')
        .select(['ts', 'event_id', 'placed', 'missed'])
        .where('device_id', '=', deviceId)
        .where('kind', '=', 'placements')
        .where('ts', '<', offeredAt)
        .orderBy('ts', 'desc')
        .orderBy('event_id', 'desc')
        .limit(PLACEMENTS_PAGE)
      if (cursor) {
        const c = cursor
        query = query.where((eb) => eb.or([eb('ts', '<', c.ts), eb.and([eb('ts', '=', c.ts), eb('event_id', '<', c.event_id)])]))
      }
      const rows = await query.execute()
      for (const row of rows) {
        counts.placed += Number(row.placed ?? 0)
        counts.missed += Number(row.missed ?? 0)
        if (counts.placed + counts.missed >= placements) return counts
      }
      if (rows.length < PLACEMENTS_PAGE) return counts
      const last = rows[rows.length - 1]!
      cursor = { ts: Number(last.ts), event_id: last.event_id }
    }
  }

  /** Records that every machine of stage `stage` ended (the soak starts now); the state does not change. */
  async markStageEnded(rolloutId: string, stage: number, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable('rollouts')
      .set({ stage_ended_at: now, updated_at: now })
      .where('rollout_id', '=', rolloutId)
      .where('stage', '=', stage)
      .where('stage_ended_at', 'is', null)
      .executeTakeFirst()
    return result.numUpdatedRows > 0n
  }

  /** A transition of the rollout taken only while it is at stage `stage`. */
  private async decideAtStage(rolloutId: string, stage: number, move: RolloutTransition, set: { updated_at: number; pause_reason: PauseReason | null; gate_state?: GateState }): Promise<boolean> {
    const active = move.to === 'running' || move.to === 'paused'
    let query = this.db
      .updateTable('rollouts')
      .set({ ...set, state: move.to, active_slot: active ? 1 : null })
      .where('rollout_id', '=', rolloutId)
      .where('stage', '=', stage)
      .where('state', 'in', move.from)
    // A regression is a verdict of the gate: taken only where it has not passed.
    if (set.gate_state !== undefined) query = query.where((eb) => gateLeaving(eb, GATE_TRANSITIONS[set.gate_state!]))
    const result = await query.executeTakeFirst()
    return result.numUpdatedRows > 0n
  }

  /** Opens stage `stage + 1` of a running rollout: its machines start waiting. Undefined when another decision came first. */
  async openNextStage(rolloutId: string, stage: number, now: number): Promise<ChangedMachine[] | undefined> {
    return inTransaction(this.db, async (trx) => {
      const moved = await trx
        .updateTable('rollouts')
        .set({ stage: stage + 1, stage_opened_at: now, stage_ended_at: null, gate_state: null, updated_at: now })
        .where('rollout_id', '=', rolloutId)
        .where('state', '=', 'running')
        .where('stage', '=', stage)
        .executeTakeFirst()
      if (moved.numUpdatedRows === 0n) return undefined
      const move = MACHINE_MOVES.stageOpens
      const opened = await trx
        .updateTable('rollout_devices')
        .set({ state: move.to, next_try_at: 0, updated_at: now })
        .where('rollout_id', '=', rolloutId)
        .where('stage', '=', stage + 1)
        .where('state', 'in', move.from)
        .returning(CHANGED_COLUMNS)
        .$narrowType<MachineStateColumn>()
        .execute()
      await shiftTallies(trx, rolloutId, opened.map((m) => ({ stage: Number(m.stage), from: 'pending', to: m.state })))
      return opened
    })
  }

  /** Offered machines silent since `silentSince` fail; returns those this call failed. */
  failSilent(rolloutId: string, silentSince: number, now: number, error: string): Promise<ChangedMachine[]> {
    return this.failSilentOf({ rolloutId }, silentSince, now, error)
  }

  /** The same for aborted rollouts, whose machines may still finish (§14): returns those failed, with their rollout. */
  failSilentAfterAbort(silentSince: number, now: number, error: string): Promise<(ChangedMachine & { rollout_id: string })[]> {
    return this.failSilentOf('aborted', silentSince, now, error)
  }

  /**
   * Fails the silent machines of one rollout, or of every aborted one: one statement per state
   * left, so the tallies know where each machine came from.
   */
  private failSilentOf(of: { rolloutId: string } | 'aborted', silentSince: number, now: number, error: string): Promise<(ChangedMachine & { rollout_id: string })[]> {
    return inTransaction(this.db, async (trx) => {
      const failed: (ChangedMachine & { rollout_id: string })[] = []
      for (const from of MACHINE_MOVES.silent.from) {
        const rows = await trx
          .updateTable('rollout_devices')
          .set({ state: MACHINE_MOVES.silent.to, error, updated_at: now })
          .where((eb) =>
            of === 'aborted' ? eb('rollout_id', 'in', eb.selectFrom('rollouts').select('rollout_id').where('state', '=', 'aborted')) : eb('rollout_id', '=', of.rolloutId),
          )
          .where('state', '=', from)
          .where('last_report_at', '<', silentSince)
          .returning(['rollout_id', ...CHANGED_COLUMNS])
          .$narrowType<MachineStateColumn>()
          .execute()
        for (const rolloutId of new Set(rows.map((m) => m.rollout_id))) {
          await shiftTallies(trx, rolloutId, rows.filter((m) => m.rollout_id === rolloutId).map((m) => ({ stage: Number(m.stage), from, to: m.state })))
        }
        failed.push(...rows)
      }
      return failed
    })
  }

  /**
   * Offered machines that linked again since the offer and have not answered it: the offer may
   * have been lost with the old link (an instance killed between recording the offer and sending
   * it). They wait again, so the holder of their new link asks for their task and offers afresh.
   * "Linked again" is the link claim's time, like the offer's on the database's clock.
   */
  requeueUnanswered(rolloutId: string, offeredBefore: number, now: number): Promise<ChangedMachine[]> {
    const move = MACHINE_MOVES.offerLost
    return this.moveReturning(rolloutId, 'offered', (trx) =>
      trx
        .updateTable('rollout_devices')
        .set({ state: move.to, next_try_at: 0, updated_at: now })
        .where('rollout_id', '=', rolloutId)
        .where('state', 'in', move.from)
        .where('offered_at', '<', offeredBefore)
        .where('answered_at', 'is', null)
        .where((eb) =>
          eb.exists(
            eb
              .selectFrom('devices')
              .select('devices.device_id')
              .whereRef('devices.device_id', '=', 'rollout_devices.device_id')
              .where('devices.link_instance', 'is not', null)
              .whereRef('devices.link_claimed_at', '>', 'rollout_devices.offered_at'),
          ),
        )
        .returning(CHANGED_COLUMNS)
        .$narrowType<MachineStateColumn>()
        .execute(),
    )
  }

  /** Waiting machines due for a try whose link this instance holds (by the devices table's hint). */
  async dueHere(rolloutId: string, instanceId: string, now: number, limit: number): Promise<string[]> {
    const rows = await this.db
      .selectFrom('rollout_devices')
      .innerJoin('devices', 'devices.device_id', 'rollout_devices.device_id')
      .select('rollout_devices.device_id')
      .where('rollout_devices.rollout_id', '=', rolloutId)
      .where('rollout_devices.state', '=', 'waiting')
      .where('rollout_devices.next_try_at', '<=', now)
      .where('devices.link_instance', '=', instanceId)
      .orderBy('rollout_devices.position')
      .limit(limit)
      .execute()
    return rows.map((r) => r.device_id)
  }

  /**
   * Takes a due waiting machine for one try: `next_try_at` moves `retrySeconds` ahead, so no other
   * instance tries it meanwhile (the lease of a try; the state does not change). False when
   * another instance took it first.
   */
  async takeTry(rolloutId: string, deviceId: string, now: number, retrySeconds: number): Promise<boolean> {
    const result = await this.db
      .updateTable('rollout_devices')
      .set({ next_try_at: this.clock.shifted(retrySeconds) })
      .where('rollout_id', '=', rolloutId)
      .where('device_id', '=', deviceId)
      .where('state', '=', 'waiting')
      .where('next_try_at', '<=', now)
      .executeTakeFirst()
    return result.numUpdatedRows > 0n
  }

  /** A waiting machine of a still-running rollout becomes offered, now by the database's clock; undefined when it no longer applies. */
  async markOffered(rolloutId: string, deviceId: string): Promise<ChangedMachine | undefined> {
    const move = MACHINE_MOVES.offer
    const { now } = this.clock
    const [offered] = await this.moveReturning(rolloutId, 'waiting', (trx) =>
      trx
        .updateTable('rollout_devices')
        .set({ state: move.to, offered_at: now, last_report_at: now, answered_at: null, progress: null, error: null, updated_at: now })
        .where('rollout_id', '=', rolloutId)
        .where('device_id', '=', deviceId)
        .where('state', 'in', move.from)
        .where((eb) => eb.exists(eb.selectFrom('rollouts').select('rollout_id').where('rollout_id', '=', rolloutId).where('state', '=', 'running')))
        .returning(CHANGED_COLUMNS)
        .$narrowType<MachineStateColumn>()
        .execute(),
    )
    return offered
  }

  /**
   * A machine's report, taken when the machine was offered this rollout's release and is in a
   * state that may lead to the reported one (rollout-states.ts: never from waiting, so a late
   * frame of an old offer cannot take a re-queued machine out of the queue, nor after its install
   * ended). `busy` puts it back to waiting for `retrySeconds`. Undefined when the report does not apply.
   */
  async report(
    rolloutId: string,
    releaseId: string,
    deviceId: string,
    change: { state: ReportedState; progress: number | null; error: string | null },
    retrySeconds: number,
  ): Promise<ChangedMachine | undefined> {
    const move = reportTransition(change.state)
    const { now } = this.clock
    // The same state first (a progress report), then the others it may come from: one statement
    // per state left, so the tallies know where the machine came from.
    const froms = [...move.from].sort((a, b) => Number(b === move.to) - Number(a === move.to))
    return inTransaction(this.db, async (trx) => {
      for (const from of froms) {
        const changed = await trx
          .updateTable('rollout_devices')
          .set({
            state: move.to,
            progress: change.progress,
            error: change.error,
            last_report_at: now,
            answered_at: now,
            updated_at: now,
            ...(move.to === 'waiting' ? { next_try_at: this.clock.shifted(retrySeconds) } : {}),
            ...(move.to === 'installed' ? { installed_at: now } : {}),
          })
          .where('rollout_id', '=', rolloutId)
          .where('device_id', '=', deviceId)
          .where('state', '=', from)
          .where((eb) => eb.exists(eb.selectFrom('rollouts').select('rollout_id').where('rollout_id', '=', rolloutId).where('release_id', '=', releaseId)))
          .returning(CHANGED_COLUMNS)
          .$narrowType<MachineStateColumn>()
          .executeTakeFirst()
        if (!changed) continue
        await shiftTallies(trx, rolloutId, [{ stage: Number(changed.stage), from, to: changed.state }])
        return changed
      }
      return undefined
    })
  }

  /** A move of machines of one rollout out of one state, with the tallies, in one transaction. */
  private moveReturning(rolloutId: string, from: MachineState, move: (trx: Db) => Promise<ChangedMachine[]>): Promise<ChangedMachine[]> {
    return inTransaction(this.db, async (trx) => {
      const moved = await move(trx)
      await shiftTallies(trx, rolloutId, moved.map((m) => ({ stage: Number(m.stage), from, to: m.state })))
      return moved
    })
  }

  /** Records counts as announced; false when another instance announced since `previous`. */
  async announceCounts(rolloutId: string, previous: string, counts: string, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable('rollouts')
      .set({ counts, counts_at: now })
      .where('rollout_id', '=', rolloutId)
      .where('counts', '=', previous)
      .executeTakeFirst()
    return result.numUpdatedRows > 0n
  }
}

/**
 * Moves machines between states in the rollout's tallies, in the caller's transaction: one
 * statement per (stage, from, to), touching the two rows in one go (rows of a stage are locked in
 * index order, so two transitions never wait on each other in a cycle).
 */
async function shiftTallies(db: Db, rolloutId: string, moved: readonly { stage: number; from: MachineState; to: MachineState }[]): Promise<void> {
  const groups = new Map<string, { stage: number; from: MachineState; to: MachineState; n: number }>()
  for (const m of moved) {
    if (m.from === m.to) continue
    const key = `${m.stage}\n${m.from}\n${m.to}`
    const group = groups.get(key) ?? { ...m, n: 0 }
    group.n++
    groups.set(key, group)
  }
  for (const g of groups.values()) {
    await db
      .updateTable('rollout_tallies')
      .set({ n: sql<number>`n + case when state = ${g.to} then cast(${g.n} as integer) else cast(${-g.n} as integer) end` })
      .where('rollout_id', '=', rolloutId)
      .where('stage', '=', g.stage)
      .where('state', 'in', [g.from, g.to])
      .execute()
  }
}

/**
 * Where the KPI gate of an ended stage may go from (NULL: not checked yet): it waits, then passes
 * or finds a regression, once. Opening the next stage clears it.
 */
export const GATE_TRANSITIONS: Record<GateState, readonly (GateState | null)[]> = {
  waiting: [null],
  passed: [null, 'waiting'],
  regression: [null, 'waiting'],
}

function gateLeaving(eb: ExpressionBuilder<Database, 'rollouts'>, from: readonly (GateState | null)[]) {
  const named = from.filter((s): s is GateState => s !== null)
  const conditions = from.includes(null) ? [eb('gate_state', 'is', null)] : []
  if (named.length > 0) conditions.push(eb('gate_state', 'in', named))
  return eb.or(conditions)
}

/** The API's view of a rollout row. */
export function rolloutView(row: RolloutRow, counts: RolloutCounts): Rollout {
  return {
    rollout_id: row.rollout_id,
    release_id: row.release_id,
    display_version: row.display_version,
    state: row.state,
    stage: Number(row.stage),
    stages: JSON.parse(row.stages) as number[],
    max_failure_ratio: Number(row.max_failure_ratio),
    soak_seconds: Number(row.soak_seconds),
    created_at: Number(row.created_at),
    created_by: row.created_by,
    selector: row.selector ?? null,
    kpi_gate: row.kpi_gate === null ? null : (JSON.parse(row.kpi_gate) as KpiGate),
    gate: (row.gate_state as GateState | null) ?? null,
    pause_reason: row.state === 'paused' ? ((row.pause_reason as PauseReason | null) ?? 'manual') : null,
    counts,
    targeted: Number(row.targeted),
  }
}
