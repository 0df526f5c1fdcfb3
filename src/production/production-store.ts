import { productionEventError, type FaultEvent, type JobEndedEvent, type JobStartedEvent, type PlacementsEvent, type ProductionEvent, type ProductionFrame, type StateEvent } from '@fleetgate/device-agent/protocol'
import { keyLock } from '../storage/key-lock.js'
import { insertColumns, MultiRowInsert, type InsertRow } from '../storage/multi-row-insert.js'
import type { Db, Storage } from '../storage/storage.js'
import type { ProductionTables } from '../storage/tables/production-tables.js'
import { RollupDeltas } from './rollup-deltas.js'
import { writeRollups } from './rollup-writer.js'
import { currentState, insertStates, type CurrentState } from './state-sequence.js'

/** Accepted event times: at most this old… */
export const MAX_EVENT_AGE_S = 30 * 86_400
/** …and at most this far ahead, by the database's clock. */
export const MAX_EVENT_LEAD_S = 5 * 60

type EventRow = InsertRow<ProductionTables['production_events']>
const EVENT_COLUMNS = insertColumns<ProductionTables['production_events']>()('device_id', 'event_id', 'ts', 'kind', 'state', 'reason', 'job_id', 'placed', 'missed', 'body', 'received_at')

/** A frame's outcome: what its acknowledgement says, and what it changed. */
export interface StoredFrame {
  /** Every event of the frame now stored: by this frame, or before. */
  ids: string[]
  rejected: { id: string; error: string }[]
  /** Events this frame stored (not stored before). */
  inserted: number
  /** Set when the machine's current state (or its reason) changed. */
  changed?: CurrentState
}

/**
 * Stores production events exactly once and keeps the rollups (§16). One transaction per frame
 * and machine, serialized per machine across instances (`keyLock`): the raw events go in with
 * ON CONFLICT DO NOTHING on (device_id, event_id), and only the rows actually inserted change
 * the state sequence, the current state, the hourly and daily rollups and the jobs, so an event
 * sent twice (to one instance or two) counts once.
 */
export class ProductionStore {
  private readonly lock: (trx: Db, key: string) => Promise<void>
  private readonly eventInsert: MultiRowInsert<EventRow, { event_id: string }>

  constructor(private readonly storage: Storage) {
    this.lock = keyLock(storage.dialect)
    this.eventInsert = new MultiRowInsert(EVENT_COLUMNS, (rows) =>
      storage.db.insertInto('production_events').values(rows).onConflict((oc) => oc.columns(['device_id', 'event_id']).doNothing()).returning('event_id'),
    )
  }

  /** Checks and stores one frame's events; resolves once committed. */
  storeFrame(deviceId: string, events: ProductionFrame['events']): Promise<StoredFrame> {
    return this.storage.db.transaction().execute(async (trx) => {
      await this.lock(trx, deviceId)
      const now = await this.storage.clock.read(trx)
      const { valid, invalid } = checkEvents(events, now)
      const rows = valid.map((event) => eventRow(deviceId, event, now))
      const inserted = new Set<string>()
      for (const statement of this.eventInsert.statements(rows)) for (const row of (await trx.executeQuery(statement)).rows) inserted.add(row.event_id)
      const stored = new Set(valid.map((e) => e.id))
      // A refused copy of an id stored before is acknowledged all the same (an id with NUL was never stored).
      const refused = [...invalid.keys()].filter((id) => !id.includes('\u0000'))
      if (refused.length > 0) {
        const earlier = await trx.selectFrom('production_events').select('event_id').where('device_id', '=', deviceId).where('event_id', 'in', refused).execute()
        for (const { event_id } of earlier) stored.add(event_id)
      }
      const fresh = valid.filter((e) => inserted.has(e.id))
      const changed = await this.apply(trx, deviceId, fresh)
      const ids: string[] = []
      const rejected: StoredFrame['rejected'] = []
      const answered = new Set<string>()
      for (const { id } of events) {
        if (answered.has(id)) continue
        answered.add(id)
        if (stored.has(id)) ids.push(id)
        else rejected.push({ id, error: invalid.get(id) ?? 'not stored' })
      }
      return { ids, rejected, inserted: fresh.length, changed }
    })
  }

  /**
   * The machine's link closed: it is `offline` from now (the database's clock) until a state
   * event with a later ts. Not written when a newer link of the machine was claimed meanwhile
   * (it was taken over, not closed) or it is offline already. Answers the new current state,
   * if it changed.
   */
  linkClosed(deviceId: string, generation: number): Promise<CurrentState | undefined> {
    return this.storage.db.transaction().execute(async (trx) => {
      await this.lock(trx, deviceId)
      const device = await trx.selectFrom('devices').select('link_generation').where('device_id', '=', deviceId).executeTakeFirst()
      if (!device || Number(device.link_generation) !== generation) return undefined
      if ((await currentState(trx, deviceId))?.state === 'offline') return undefined
      const now = await this.storage.clock.read(trx)
      const deltas = new RollupDeltas()
      const change = await insertStates(trx, deviceId, [{ ts: now, state: 'offline', reason: null, event_id: null }], deltas)
      await writeRollups(trx, deviceId, deltas)
      return change && stateChanged(change.before, change.after) ? change.after : undefined
    })
  }

  /** What newly stored events change: states and current state, rollups, jobs. */
  private async apply(trx: Db, deviceId: string, events: ProductionEvent[]): Promise<CurrentState | undefined> {
    if (events.length === 0) return undefined
    const deltas = new RollupDeltas()
    const states = events.filter((e): e is StateEvent => e.kind === 'state')
    const change = await insertStates(trx, deviceId, states.map((e) => ({ ts: e.ts, state: e.state, reason: e.reason ?? null, event_id: e.id })), deltas)
    const jobs = new JobChanges()
    for (const event of events) {
      switch (event.kind) {
        case 'placements':
          deltas.placements(event.ts, event.placed, event.missed, (event as PlacementsEvent).feeders, (event as PlacementsEvent).nozzles)
          if (event.job_id !== undefined) jobs.placements(event)
          break
        case 'fault':
          deltas.fault(event.ts, (event as FaultEvent).fault)
          break
        case 'job_ended':
          if (event.result === 'completed') deltas.jobCompleted(event.ts)
          jobs.ended(event)
          break
        case 'job_started':
          jobs.started(event)
          break
        case 'state':
          break
        default:
          return event satisfies never
      }
    }
    await writeRollups(trx, deviceId, deltas)
    await jobs.write(trx, deviceId)
    return change && stateChanged(change.before, change.after) ? change.after : undefined
  }
}

const stateChanged = (before: CurrentState | undefined, after: CurrentState) => (before?.state ?? 'offline') !== after.state || (before?.reason ?? null) !== after.reason

/**
 * Splits a frame's events into those to store and those rejected (by id, with the reason): a
 * wrong shape, a `ts` outside [now − 30 days, now + 5 minutes] by the database's clock, or text
 * the database cannot hold. An id repeated within the frame is stored once, from its first valid copy.
 */
function checkEvents(events: ProductionFrame['events'], now: number): { valid: ProductionEvent[]; invalid: Map<string, string> } {
  const valid: ProductionEvent[] = []
  const validIds = new Set<string>()
  const invalid = new Map<string, string>()
  for (const event of events) {
    if (validIds.has(event.id)) continue
    const error = productionEventError(event) ?? timeError(event.ts as number, now) ?? textError(event)
    if (error === undefined) {
      valid.push(event as unknown as ProductionEvent)
      validIds.add(event.id)
      invalid.delete(event.id)
    } else if (!invalid.has(event.id)) invalid.set(event.id, error)
  }
  return { valid, invalid }
}

function timeError(ts: number, now: number): string | undefined {
  if (ts < now - MAX_EVENT_AGE_S) return `ts ${ts} is more than 30 days old`
  if (ts > now + MAX_EVENT_LEAD_S) return `ts ${ts} is more than 5 minutes ahead of the gateway's clock`
  return undefined
}

/** PostgreSQL text cannot hold NUL: an id or a stored name with one is refused, never half stored. */
function textError(event: Record<string, unknown>): string | undefined {
  for (const field of ['id', 'reason', 'job_id', 'order_id', 'program']) {
    const value = event[field]
    if (typeof value === 'string' && value.includes('\u0000')) return `${field} contains a NUL character`
  }
  return undefined
}

function eventRow(deviceId: string, event: ProductionEvent, now: number): EventRow {
  return {
    device_id: deviceId,
    event_id: event.id,
    ts: event.ts,
    kind: event.kind,
    state: event.kind === 'state' ? event.state : null,
    reason: event.kind === 'state' ? (event.reason ?? null) : null,
    job_id: 'job_id' in event && event.job_id !== undefined ? event.job_id : null,
    placed: event.kind === 'placements' ? event.placed : null,
    missed: event.kind === 'placements' ? event.missed : null,
    body: JSON.stringify(event),
    received_at: now,
  }
}

/**
 * A frame's changes to its machine's jobs, one row per job (an upsert may not touch a row
 * twice). Either of `job_started` and `job_ended` may come first; a job started twice keeps
 * its earliest start, one ended twice its latest end, whatever the order they arrive in.
 */
class JobChanges {
  private readonly starts = new Map<string, JobStartedEvent>()
  private readonly ends = new Map<string, JobEndedEvent>()
  private readonly counts = new Map<string, { placed: number; missed: number }>()

  started(event: JobStartedEvent): void {
    const known = this.starts.get(event.job_id)
    if (!known || event.ts < known.ts) this.starts.set(event.job_id, event)
  }

  ended(event: JobEndedEvent): void {
    const known = this.ends.get(event.job_id)
    if (!known || event.ts > known.ts) this.ends.set(event.job_id, event)
  }

  placements(event: PlacementsEvent): void {
    const count = this.counts.get(event.job_id!) ?? { placed: 0, missed: 0 }
    this.counts.set(event.job_id!, { placed: count.placed + event.placed, missed: count.missed + event.missed })
  }

  async write(trx: Db, deviceId: string): Promise<void> {
    if (this.starts.size > 0) {
      await trx
        .insertInto('production_jobs')
        .values(
          [...this.starts.values()].map((e) => ({
            device_id: deviceId,
            job_id: e.job_id,
            order_id: e.order_id ?? null,
            program: e.program ?? null,
            started_at: e.ts,
            boards_planned: e.boards_planned ?? null,
          })),
        )
        .onConflict((oc) =>
          oc
            .columns(['device_id', 'job_id'])
            .doUpdateSet((eb) => ({
              order_id: eb.ref('excluded.order_id'),
              program: eb.ref('excluded.program'),
              started_at: eb.ref('excluded.started_at'),
              boards_planned: eb.ref('excluded.boards_planned'),
            }))
            .where((eb) => eb.or([eb('production_jobs.started_at', 'is', null), eb('production_jobs.started_at', '>', eb.ref('excluded.started_at'))])),
        )
        .execute()
    }
    if (this.ends.size > 0) {
      await trx
        .insertInto('production_jobs')
        .values([...this.ends.values()].map((e) => ({ device_id: deviceId, job_id: e.job_id, ended_at: e.ts, result: e.result, boards_done: e.boards_done })))
        .onConflict((oc) =>
          oc
            .columns(['device_id', 'job_id'])
            .doUpdateSet((eb) => ({ ended_at: eb.ref('excluded.ended_at'), result: eb.ref('excluded.result'), boards_done: eb.ref('excluded.boards_done') }))
            .where((eb) => eb.or([eb('production_jobs.ended_at', 'is', null), eb('production_jobs.ended_at', '<', eb.ref('excluded.ended_at'))])),
        )
        .execute()
    }
    if (this.counts.size > 0) {
      await trx
        .insertInto('production_jobs')
        .values([...this.counts].map(([jobId, c]) => ({ device_id: deviceId, job_id: jobId, placed: c.placed, missed: c.missed })))
        .onConflict((oc) =>
          oc.columns(['device_id', 'job_id']).doUpdateSet((eb) => ({
            placed: eb('production_jobs.placed', '+', eb.ref('excluded.placed')),
            missed: eb('production_jobs.missed', '+', eb.ref('excluded.missed')),
          })),
        )
        .execute()
    }
  }
}
