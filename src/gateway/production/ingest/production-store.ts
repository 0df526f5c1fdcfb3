import { sql, type CompiledQuery } from 'kysely'
import { productionEventError, type FaultEvent, type JobEndedEvent, type JobStartedEvent, type PlacementsEvent, type ProductionEvent, type ProductionFrame } from '@fleetgate/device-agent/protocol'
import { GroupCommit } from '../../../storage/group-commit.js'
import { keyLockThenClock } from '../../../storage/key-lock.js'
import { insertColumns, MultiRowInsert, type InsertRow } from '../../../storage/multi-row-insert.js'
import { runIndependentWrites } from '../../../storage/independent-writes.js'
import type { Db, Storage } from '../../../storage/storage.js'
import type { ProductionTables } from '../../../storage/tables/production-tables.js'
import { RollupDeltas } from './rollup-deltas.js'
import { RollupWriter } from './rollup-writer.js'
import { currentStates, StateSequence, type CurrentState, type StateChange, type StateRow } from './state-sequence.js'

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

/** A frame waiting for its group's commit; `result` is set by the transaction that stored it. */
interface FrameItem {
  deviceId: string
  events: ProductionFrame['events']
  result?: StoredFrame
}

/** A closed link waiting for its group's commit; `result` is set by the transaction that recorded it. */
interface CloseItem {
  deviceId: string
  generation: number
  result?: CurrentState
}

/** Events waiting for a commit, at most, across this instance's links (each link has at most 64 frames unacknowledged). */
export const MAX_QUEUED_EVENTS = 200_000

/** Closed links waiting for a commit, at most: more links than an instance holds. */
export const MAX_QUEUED_CLOSES = 100_000

/** Too many events wait for the database: the link is asked to come back later. */
export class ProductionBacklogFull extends Error {}

/**
 * Stores production events exactly once and keeps the rollups (§16). Frames of several links
 * that arrive together are committed together (group commit), their machines serialized across
 * instances (`keyLockThenClock`): the raw events go in with ON CONFLICT DO NOTHING on
 * (device_id, event_id), and only the rows actually inserted change the state sequence, the
 * current state, the hourly and daily rollups and the jobs, so an event sent twice (to one
 * instance or two) counts once.
 */
export class ProductionStore {
  private readonly lock: (trx: Db, keys: readonly string[]) => Promise<number>
  private readonly eventInsert: MultiRowInsert<EventRow, { device_id: string; event_id: string }>
  private readonly states: StateSequence
  private readonly rollups: RollupWriter
  private readonly jobs: JobWriter
  private readonly commits: GroupCommit<FrameItem>
  private readonly closes: GroupCommit<CloseItem>

  constructor(private readonly storage: Storage) {
    this.lock = keyLockThenClock(storage.dialect, storage.clock)
    this.states = new StateSequence(storage.db)
    this.rollups = new RollupWriter(storage.db)
    this.jobs = new JobWriter(storage.db)
    this.eventInsert = new MultiRowInsert(EVENT_COLUMNS, (rows) =>
      storage.db.insertInto('production_events').values(rows).onConflict((oc) => oc.columns(['device_id', 'event_id']).doNothing()).returning(['device_id', 'event_id']),
    )
    this.commits = new GroupCommit({
      commit: (items) => this.commitFrames(items),
      maxQueued: MAX_QUEUED_EVENTS,
      whenFull: () => new ProductionBacklogFull(`more than ${MAX_QUEUED_EVENTS} production events wait for the database`),
      // 64 frames (3,200 events of 50) a transaction: 0.54–0.55× the plain table on PostgreSQL
      // against 0.49× with 32 (npm run bench -- production ingest, quiet machine).
      maxGroup: 64,
      writers: storage.concurrentWriters,
      gatherTurn: storage.synchronousWrites,
    })
    // 64 machines a transaction (GroupCommit's default), as frames: each takes a lock of its
    // machine on PostgreSQL, and the lock table is shared by every instance's writers.
    this.closes = new GroupCommit({
      commit: (items) => this.commitCloses(items),
      maxQueued: MAX_QUEUED_CLOSES,
      whenFull: () => new ProductionBacklogFull(`more than ${MAX_QUEUED_CLOSES} closed links wait for the database`),
      writers: storage.concurrentWriters,
      gatherTurn: storage.synchronousWrites,
    })
  }

  /** Checks and stores one frame's events; resolves once committed. */
  async storeFrame(deviceId: string, events: ProductionFrame['events']): Promise<StoredFrame> {
    const item: FrameItem = { deviceId, events }
    await this.commits.submit(item, events.length)
    return item.result!
  }

  /** One transaction for a group of frames: their raw events in one statement, then their machines locked and each frame's consequences. */
  private commitFrames(items: FrameItem[]): Promise<void> {
    return this.storage.db.transaction().execute(async (trx) => {
      const now = Number((await sql<{ now: number }>`select ${this.storage.clock.now} as now`.execute(trx)).rows[0]!.now)
      const checked = items.map((item) => checkEvents(item.events, now))
      // In key order: two groups inserting the same ids wait for each other's rows in one order, never in a cycle.
      const rows = items.flatMap((item, i) => checked[i]!.valid.map((event) => eventRow(item.deviceId, event, now))).sort(byKey)
      /** Per machine, the ids this statement inserted; a frame takes each once (the same id in two frames of a group counts once). */
      const inserted = new Map<string, Set<string>>()
      for (const statement of this.eventInsert.statements(rows)) {
        for (const row of (await trx.executeQuery(statement)).rows) {
          let ids = inserted.get(row.device_id)
          if (!ids) inserted.set(row.device_id, (ids = new Set()))
          ids.add(row.event_id)
        }
      }
      // The raw events go in before the machines are locked, so that groups sharing machines
      // insert at once and wait for each other only for what they derive. What another group
      // inserts it derives itself: an id inserted by both waits for the first to commit (or
      // roll back) and is then taken by one only.
      await this.lock(
        trx,
        items.map((i) => i.deviceId),
      )
      const fresh = new Map<string, ProductionEvent[]>()
      for (const [i, item] of items.entries()) {
        const taken = inserted.get(item.deviceId)
        const stored = checked[i]!.valid.filter((e) => taken?.delete(e.id))
        fresh.set(item.deviceId, [...(fresh.get(item.deviceId) ?? []), ...stored])
        item.result = await this.acknowledgement(trx, item, checked[i]!, stored.length)
      }
      const changes = await this.apply(trx, fresh)
      // A machine's change is reported once, with its last frame of the group.
      for (const item of [...items].reverse()) {
        const change = changes.get(item.deviceId)
        if (!change) continue
        changes.delete(item.deviceId)
        if (stateChanged(change.before, change.after)) item.result!.changed = change.after
      }
    })
  }

  /** What a frame's acknowledgement says: every id stored (by it or before) and the refused ones with their reasons. */
  private async acknowledgement(trx: Db, { deviceId, events }: FrameItem, { valid, invalid }: CheckedEvents, inserted: number): Promise<StoredFrame> {
    const stored = new Set(valid.map((e) => e.id))
    // A refused copy of an id stored before is acknowledged all the same (an id with NUL was never stored).
    const refused = [...invalid.keys()].filter((id) => !id.includes('\u0000'))
    if (refused.length > 0) {
      const earlier = await trx.selectFrom('production_events').select('event_id').where('device_id', '=', deviceId).where('event_id', 'in', refused).execute()
      for (const { event_id } of earlier) stored.add(event_id)
    }
    const ids: string[] = []
    const rejected: StoredFrame['rejected'] = []
    const answered = new Set<string>()
    for (const { id } of events) {
      if (answered.has(id)) continue
      answered.add(id)
      if (stored.has(id)) ids.push(id)
      else rejected.push({ id, error: invalid.get(id) ?? 'not stored' })
    }
    return { ids, rejected, inserted }
  }

  /**
   * The machine's link closed: it is `offline` from now (the database's clock) until a state
   * event with a later ts. Not written when a newer link of the machine was claimed meanwhile
   * (it was taken over, not closed) or it is offline already. Answers the new current state,
   * if it changed. Closes that arrive together share a transaction (group commit, as frames):
   * an instance that stops, or a site whose uplink drops, closes thousands of links at once.
   */
  async linkClosed(deviceId: string, generation: number): Promise<CurrentState | undefined> {
    const item: CloseItem = { deviceId, generation }
    await this.closes.submit(item, 1)
    return item.result
  }

  /** One transaction for a group of closes: their machines locked, then two reads (link generations, current states) and the writes for all of them. */
  private commitCloses(items: CloseItem[]): Promise<void> {
    return this.storage.db.transaction().execute(async (trx) => {
      const deviceIds = [...new Set(items.map((i) => i.deviceId))]
      const now = await this.lock(trx, deviceIds)
      const generations = new Map(
        (await trx.selectFrom('devices').select(['device_id', 'link_generation']).where('device_id', 'in', deviceIds).execute()).map((d) => [d.device_id, Number(d.link_generation)]),
      )
      const current = await currentStates(trx, deviceIds)
      const offline = new Set([...current].filter(([, s]) => s.state === 'offline').map(([id]) => id))
      /** Per machine, the close that makes it offline: of its current link, while not offline (a machine closed twice counts once). */
      const closers = new Map<string, CloseItem>()
      for (const item of items) {
        item.result = undefined
        if (generations.get(item.deviceId) === item.generation && !offline.has(item.deviceId) && !closers.has(item.deviceId)) closers.set(item.deviceId, item)
      }
      if (closers.size === 0) return
      const closing = new Map([...closers.keys()].map((id): [string, StateRow[]] => [id, [{ ts: now, state: 'offline', reason: null, event_id: null }]]))
      const deltas = new Map<string, RollupDeltas>()
      const { changes, writes } = await this.states.insert(trx, closing, deltasIn(deltas), current)
      await runIndependentWrites(trx, this.storage.dialect, [...writes, ...(await this.rollups.write(trx, deltas))])
      for (const [id, item] of closers) {
        const change = changes.get(id)
        if (change && stateChanged(change.before, change.after)) item.result = change.after
      }
    })
  }

  /** What newly stored events change, for every machine of a group at once: states and current states, rollups, jobs; two reads, then the writes together. */
  private async apply(trx: Db, fresh: Map<string, ProductionEvent[]>): Promise<Map<string, StateChange>> {
    const deltas = new Map<string, RollupDeltas>()
    const deltasOf = deltasIn(deltas)
    const states = new Map<string, StateRow[]>()
    const jobs = new Map<string, JobChanges>()
    for (const [deviceId, events] of fresh) {
      if (events.length === 0) continue
      const d = deltasOf(deviceId)
      const j = new JobChanges()
      jobs.set(deviceId, j)
      const rows: StateRow[] = []
      for (const event of events) {
        switch (event.kind) {
          case 'state':
            rows.push({ ts: event.ts, state: event.state, reason: event.reason ?? null, event_id: event.id })
            break
          case 'placements':
            d.placements(event.ts, event.placed, event.missed, (event as PlacementsEvent).feeders, (event as PlacementsEvent).nozzles)
            if (event.job_id !== undefined) j.placements(event)
            break
          case 'fault':
            d.fault(event.ts, (event as FaultEvent).fault)
            break
          case 'job_ended':
            if (event.result === 'completed') d.jobCompleted(event.ts)
            j.ended(event)
            break
          case 'job_started':
            j.started(event)
            break
          default:
            event satisfies never
        }
      }
      states.set(deviceId, rows)
    }
    const { changes, writes } = await this.states.insert(trx, states, deltasOf)
    // Each write touches its own table: states, current states, hourly and daily rollups, jobs.
    await runIndependentWrites(trx, this.storage.dialect, [...writes, ...(await this.rollups.write(trx, deltas)), ...this.jobs.write(jobs)])
    return changes
  }
}

/** Each machine's rollup deltas in `deltas`, made at its first use. */
const deltasIn = (deltas: Map<string, RollupDeltas>) => (deviceId: string) => {
  let d = deltas.get(deviceId)
  if (!d) deltas.set(deviceId, (d = new RollupDeltas()))
  return d
}

const stateChanged = (before: CurrentState | undefined, after: CurrentState) => (before?.state ?? 'offline') !== after.state || (before?.reason ?? null) !== after.reason

/**
 * Splits a frame's events into those to store and those rejected (by id, with the reason): a
 * wrong shape, a `ts` outside [now − 30 days, now + 5 minutes] by the database's clock, or text
 * the database cannot hold. An id repeated within the frame is stored once, from its first valid copy.
 */
interface CheckedEvents {
  valid: ProductionEvent[]
  /** Why each refused id was refused. */
  invalid: Map<string, string>
}

function checkEvents(events: ProductionFrame['events'], now: number): CheckedEvents {
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

/** One order of (device_id, event_id), the same for every group of every instance. */
const byKey = (a: EventRow, b: EventRow) => (a.device_id < b.device_id ? -1 : a.device_id > b.device_id ? 1 : a.event_id < b.event_id ? -1 : a.event_id > b.event_id ? 1 : 0)

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

/** A job's changes, all in one row: its start (or nulls), its end (or nulls), the placements counted. */
type JobRow = {
  device_id: string
  job_id: string
  order_id: string | null
  program: string | null
  started_at: number | null
  boards_planned: number | null
  ended_at: number | null
  result: string | null
  boards_done: number | null
  placed: number
  missed: number
}

/**
 * A frame's changes to its machine's jobs, one row per job (an upsert may not touch a row
 * twice). Either of `job_started` and `job_ended` may come first; a job started twice keeps
 * its earliest start, one ended twice its latest end, whatever the order they arrive in.
 */
class JobChanges {
  readonly starts = new Map<string, JobStartedEvent>()
  readonly ends = new Map<string, JobEndedEvent>()
  readonly counts = new Map<string, { placed: number; missed: number }>()

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
}

/**
 * Writes `JobChanges` with one upsert whose text is built once, a row per job: a start replaces
 * the stored one when there is none or it is later, an end when there is none or it is earlier,
 * and the placements add up.
 */
class JobWriter {
  private readonly upsert: MultiRowInsert<JobRow>

  constructor(db: Db) {
    const startWins = sql<boolean>`excluded.started_at is not null and (production_jobs.started_at is null or production_jobs.started_at > excluded.started_at)`
    const endWins = sql<boolean>`excluded.ended_at is not null and (production_jobs.ended_at is null or production_jobs.ended_at < excluded.ended_at)`
    const pick = (wins: typeof startWins, column: string) => sql<never>`case when ${wins} then ${sql.ref(`excluded.${column}`)} else ${sql.ref(`production_jobs.${column}`)} end`
    this.upsert = new MultiRowInsert<JobRow>(['device_id', 'job_id', 'order_id', 'program', 'started_at', 'boards_planned', 'ended_at', 'result', 'boards_done', 'placed', 'missed'], (rows) =>
      db
        .insertInto('production_jobs')
        .values(rows)
        .onConflict((oc) =>
          oc.columns(['device_id', 'job_id']).doUpdateSet((eb) => ({
            order_id: pick(startWins, 'order_id'),
            program: pick(startWins, 'program'),
            boards_planned: pick(startWins, 'boards_planned'),
            started_at: pick(startWins, 'started_at'),
            result: pick(endWins, 'result'),
            boards_done: pick(endWins, 'boards_done'),
            ended_at: pick(endWins, 'ended_at'),
            placed: eb('production_jobs.placed', '+', eb.ref('excluded.placed')),
            missed: eb('production_jobs.missed', '+', eb.ref('excluded.missed')),
          })),
        ),
    )
  }

  /** The statement writing each machine's job changes. */
  write(byDevice: Map<string, JobChanges>): CompiledQuery[] {
    const rows: JobRow[] = []
    for (const [deviceId, jobs] of byDevice) {
      for (const jobId of new Set([...jobs.starts.keys(), ...jobs.ends.keys(), ...jobs.counts.keys()])) {
        const start = jobs.starts.get(jobId)
        const end = jobs.ends.get(jobId)
        const count = jobs.counts.get(jobId)
        rows.push({
          device_id: deviceId,
          job_id: jobId,
          order_id: start?.order_id ?? null,
          program: start?.program ?? null,
          started_at: start?.ts ?? null,
          boards_planned: start?.boards_planned ?? null,
          ended_at: end?.ts ?? null,
          result: end?.result ?? null,
          boards_done: end?.boards_done ?? null,
          placed: count?.placed ?? 0,
          missed: count?.missed ?? 0,
        })
      }
    }
    return this.upsert.statements(rows)
  }
}
