import { sql } from 'kysely'
import { AppError } from '../../errors.js'
import { GroupCommit } from '../../storage/group-commit.js'
import { pruneOldest, type PruneStep } from '../../storage/prune-step.js'
import type { Db, RowId, Storage, Tx } from '../../storage/storage.js'
import { TextByShape } from '../../storage/text-by-shape.js'
import { countSince, tally } from '../../storage/window-tallies.js'
import { countInRanges, pruneRanges, rangeUpsert, recordRanges, type RangeUpsert } from './point-ranges.js'
import { encodeBatch, seriesKey, type EncodedBatch, type NewestPoint, type TimedRecord } from './telemetry-batch.js'
import type { TelemetryValue } from './telemetry-schemas.js'
import { pointArraysInsert, pointInsert, seriesInsert, type PointRow, type SeriesRow } from './telemetry-statements.js'

export type { TimedRecord } from './telemetry-batch.js'

export type Series = Record<string, [number, TelemetryValue][]>

/**
 * Whether a batch may be stored, decided from its device's record as the write's transaction
 * reads it (undefined: no such device): an error refuses the batch (nothing of it is stored)
 * and is what `insert` rejects with.
 */
export type DeviceGate = (device: { token_hash: string | null } | undefined) => Error | undefined

/** A batch waiting for its group's commit, with its gate and what the gate answered. */
interface PendingBatch extends EncodedBatch {
  gate?: DeviceGate
  refused?: Error
}

/**
 * Points waiting behind the commits under way, at most (about 100 bytes each). Beyond, a batch
 * is refused with 503 `server_busy` rather than held.
 */
export const MAX_QUEUED_POINTS = 200_000

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/**
 * Telemetry: a series per (device, key) holding its newest point, and one row per point.
 * Ingest is the hot path: batches are group-committed (see `GroupCommit`); per group, in one
 * transaction: a read of its devices (see `admit`), a read of its series ids (an insert of the new ones), one INSERT of
 * the points (on SQLite a multi-row one, with an upsert of their ranges' time bounds: see `point-ranges.ts`; on PostgreSQL
 * of arrays, see `pointArraysInsert`), one UPDATE moving the series' newest points, one upsert adding them to the
 * summary's tallies per minute.
 */
export class TelemetryStore {
  private readonly commits: GroupCommit<PendingBatch>
  private readonly insertSeries: ReturnType<typeof seriesInsert>
  /** SQLite only: the points' multi-row INSERT and the upsert of their row id ranges' time bounds (PostgreSQL takes arrays). */
  private readonly sqlitePoints?: { insert: ReturnType<typeof pointInsert>; upsertRanges: RangeUpsert }

  /**
   * `writers`: group commits under way at once (see `Storage.concurrentWriters`);
   * `maxQueuedPoints`: points that may wait for a writer before batches get `server_busy`;
   * `gatherTurn`: writers wait for the end of the event loop's turn (see `Storage.synchronousWrites`);
   * `storage.rowId` names a point when pruning (points have no key of their own).
   */
  private readonly db: Db
  private readonly rowId: RowId
  private readonly dialect: Storage['dialect']
  /** The texts of the statements each group commit runs besides the INSERTs, by shape (see `TextByShape`). */
  private readonly texts = new TextByShape()
  constructor(storage: Pick<Storage, 'db' | 'rowId' | 'dialect'>, options: { writers?: number; maxQueuedPoints?: number; gatherTurn?: boolean } = {}) {
    const { db } = storage
    this.db = db
    this.rowId = storage.rowId
    this.dialect = storage.dialect
    this.insertSeries = seriesInsert(db)
    if (storage.dialect === 'sqlite') this.sqlitePoints = { insert: pointInsert(db), upsertRanges: rangeUpsert(db) }
    this.commits = new GroupCommit({
      commit: (batches) => db.transaction().execute((tx) => this.write(tx, batches)),
      maxQueued: options.maxQueuedPoints ?? MAX_QUEUED_POINTS,
      whenFull: () => new AppError('server_busy', 'Telemetry is arriving faster than it can be stored; retry shortly', { retry_after: 1 }),
      writers: options.writers,
      gatherTurn: options.gatherTurn,
    })
  }

  /**
   * Stores every point of the records, all or nothing; resolves with the point count after the
   * commit. Rejects with `server_busy` (nothing stored) when too many points wait already, and
   * with the error `gate` answers for the device's record, read in the write's transaction
   * (one read for a group's devices, not one per request; a device deleted meanwhile is not
   * written to: see `admit`).
   */
  async insert(deviceId: string, records: TimedRecord[], gate?: DeviceGate): Promise<number> {
    const batch: PendingBatch = encodeBatch(deviceId, records)
    if (batch.points.length === 0 && !gate) return 0
    batch.gate = gate
    await this.commits.submit(batch, Math.max(1, batch.points.length))
    if (batch.refused) throw batch.refused
    return batch.points.length
  }

  /**
   * Series ids first (no lock on a series that exists), then the points, then each series'
   * newest point moved forward, then the tallies: the series rows a batch locks are held only
   * from that statement to the commit, so batches of one device, which touch the same series,
   * overlap everything else; a tally row (shared by every writer of that minute) only from the
   * last statement.
   */
  private async write(tx: Tx, group: PendingBatch[]): Promise<void> {
    const batches = (await this.admit(tx, group)).filter((b) => b.points.length > 0)
    if (batches.length === 0) return
    const newest = newestPerSeries(batches)
    const { ids, created } = await this.seriesIds(tx, newest)
    const { rows, times } = pointRows(batches, ids)
    await this.insertPointRows(tx, rows, times)
    const moved = newest.filter((s) => !created.has(seriesKey(s.deviceId, s.key))).map((s) => ({ ...s, seriesId: ids.get(seriesKey(s.deviceId, s.key))! }))
    await moveNewest(tx, moved, this.texts)
    await tally(tx, 'telemetry', times, 1, this.texts)
  }

  /** The points, and on SQLite the bounds of the row id ranges they went to. */
  private async insertPointRows(tx: Tx, rows: PointRow[], times: number[]): Promise<void> {
    if (!this.sqlitePoints) {
      for (let i = 0; i < rows.length; i += ARRAY_ROWS) await pointArraysInsert(rows.slice(i, i + ARRAY_ROWS)).execute(tx)
      return
    }
    const { insert, upsertRanges } = this.sqlitePoints
    let stored = 0
    for (const statement of insert.statements(rows)) {
      const { insertId, numAffectedRows } = await tx.executeQuery(statement)
      const inserted = Number(numAffectedRows)
      await recordRanges(tx, upsertRanges, Number(insertId), times.slice(stored, stored + inserted))
      stored += inserted
    }
  }

  /**
   * The group's batches their gates let through (the others get `refused`). The devices are read
   * first, in one statement; on PostgreSQL with FOR KEY SHARE, which waits for a delete of the
   * device under way (and then finds no row) and makes a later one wait for this commit:
   * points are never written for a device being deleted. Heartbeats' updates do not conflict.
   */
  private async admit(tx: Tx, group: PendingBatch[]): Promise<PendingBatch[]> {
    const gated = [...new Set(group.filter((b) => b.gate).map((b) => b.deviceId))]
    if (gated.length === 0) return group
    const devices = new Map<string, { token_hash: string | null }>()
    for (let i = 0; i < gated.length; i += READ_BATCH) {
      const ids = gated.slice(i, i + READ_BATCH)
      const read = () =>
        tx
          .selectFrom('platform_devices')
          .select(['device_id', 'token_hash'])
          .where('device_id', 'in', ids)
          .$if(this.dialect === 'postgres', (q) => q.forKeyShare())
          .compile()
      const { rows } = await tx.executeQuery(this.texts.compiled(`devices:${ids.length}`, ids, read))
      for (const row of rows) devices.set(row.device_id, row)
    }
    for (const batch of group) batch.refused = batch.gate?.(devices.get(batch.deviceId))
    return group.filter((batch) => !batch.refused)
  }

  /**
   * The ids of the group's series by (device, key): read, then the missing ones created with
   * their newest point (`created`), then read again those another writer created meanwhile.
   */
  private async seriesIds(tx: Tx, series: SeriesNewest[]): Promise<{ ids: Map<string, number>; created: Set<string> }> {
    const ids = await readSeriesIds(tx, series, this.texts)
    const created = new Set<string>()
    const missing = series.filter((s) => !ids.has(seriesKey(s.deviceId, s.key)))
    if (missing.length === 0) return { ids, created }
    const rows = missing.map((s): SeriesRow => ({ device_id: s.deviceId, key: s.key, last_ts: s.ts, last_value: s.value }))
    for (const statement of this.insertSeries.statements(rows)) {
      for (const row of (await tx.executeQuery(statement)).rows) {
        const key = seriesKey(row.device_id, row.key)
        ids.set(key, Number(row.series_id))
        created.add(key)
      }
    }
    const raced = missing.filter((s) => !ids.has(seriesKey(s.deviceId, s.key)))
    for (const [key, id] of await readSeriesIds(tx, raced, this.texts)) ids.set(key, id)
    return { ids, created }
  }

  /** Per key, the newest `limit` points within [from, to], returned oldest first; [] for an unknown key. */
  async series(deviceId: string, keys: string[], range: { from?: number; to?: number; limit: number }): Promise<Series> {
    const series: Series = Object.fromEntries(keys.map((k) => [k, []]))
    if (keys.length === 0) return series
    const known = await this.db
      .selectFrom('platform_telemetry_series')
      .select(['series_id', 'key'])
      .where('device_id', '=', deviceId)
      .where('key', 'in', keys)
      .execute()
    for (const { series_id, key } of known) {
      const rows = await this.db
        .selectFrom('platform_telemetry')
        .select(['ts', 'value'])
        .where('series_id', '=', series_id)
        .$if(range.from !== undefined, (q) => q.where('ts', '>=', range.from!))
        .$if(range.to !== undefined, (q) => q.where('ts', '<=', range.to!))
        .orderBy('ts', 'desc')
        .limit(range.limit)
        .execute()
      series[key] = rows.reverse().map((r) => [r.ts, JSON.parse(r.value) as TelemetryValue])
    }
    return series
  }

  /** The newest point of every series of the device (kept past retention, until the device is deleted). */
  async latest(deviceId: string): Promise<Record<string, { ts: number; value: TelemetryValue }>> {
    const rows = await this.db
      .selectFrom('platform_telemetry_series')
      .select(['key', 'last_ts', 'last_value'])
      .where('device_id', '=', deviceId)
      .orderBy('key')
      .execute()
    return Object.fromEntries(rows.map((r) => [r.key, { ts: r.last_ts, value: JSON.parse(r.last_value) as TelemetryValue }]))
  }

  async keys(deviceId: string): Promise<string[]> {
    const rows = await this.db.selectFrom('platform_telemetry_series').select('key').where('device_id', '=', deviceId).orderBy('key').execute()
    return rows.map((r) => r.key)
  }

  /** Points with a time at or after `since`: their tallies per minute, and the points of the minute `since` lies in. */
  countSince(since: number): Promise<number> {
    return countSince(this.db, 'telemetry', since, async (from, to) => {
      if (this.dialect === 'sqlite') return countInRanges(this.db, from, to)
      const row = await this.db
        .selectFrom('platform_telemetry')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('ts', '>=', from)
        .where('ts', '<', to)
        .executeTakeFirstOrThrow()
      return Number(row.n)
    })
  }

  /**
   * Deletes up to `batch` points older than `cutoff`, from `from` on: on PostgreSQL the oldest
   * along the time index (see `pruneOldest`), on SQLite in row order over its point ranges (see `pruneRanges`).
   */
  pruneBatch(cutoff: number, batch: number, from?: number): Promise<PruneStep> {
    if (this.dialect === 'sqlite') return pruneRanges(this.db, cutoff, batch, from)
    return pruneOldest(this.db, 'platform_telemetry', cutoff, batch, from, this.rowId, { kind: 'telemetry' })
  }
}

/** Removes every series and point of the device; call inside the device's delete transaction. */
export async function deleteDeviceTelemetry(tx: Tx, deviceId: string): Promise<void> {
  const points = await tx
    .deleteFrom('platform_telemetry')
    .where('series_id', 'in', (eb) => eb.selectFrom('platform_telemetry_series').select('series_id').where('device_id', '=', deviceId))
    .returning('ts')
    .execute()
  await tx.deleteFrom('platform_telemetry_series').where('device_id', '=', deviceId).execute()
  await tally(tx, 'telemetry', points.map((p) => p.ts), -1)
}

/**
 * The group's points as rows, and their times in the same order. A batch's few keys are looked
 * up in `ids` once each: a (device, key) string built per point cost 61 µs a batch of 200 points,
 * 9 % of the server's time in `bench -- ingest`.
 */
function pointRows(batches: EncodedBatch[], ids: Map<string, number>): { rows: PointRow[]; times: number[] } {
  const rows: PointRow[] = []
  const times: number[] = []
  for (const { deviceId, points } of batches) {
    const idOfKey = new Map<string, number>()
    for (const [key, ts, value] of points) {
      let series_id = idOfKey.get(key)
      if (series_id === undefined) {
        series_id = ids.get(seriesKey(deviceId, key))!
        idOfKey.set(key, series_id)
      }
      rows.push({ series_id, ts, value })
      times.push(ts)
    }
  }
  return { rows, times }
}

type SeriesNewest = { deviceId: string; key: string } & NewestPoint

/** The newest point of each series of the group, in (device, key) order (a series appears once). */
function newestPerSeries(batches: EncodedBatch[]): SeriesNewest[] {
  const newest = new Map<string, SeriesNewest>()
  for (const batch of batches) {
    for (const [key, point] of batch.newest) {
      const id = seriesKey(batch.deviceId, key)
      const seen = newest.get(id)
      if (seen === undefined || point.ts >= seen.ts) newest.set(id, { deviceId: batch.deviceId, key, ...point })
    }
  }
  return [...newest.values()].sort((a, b) => compare(a.deviceId, b.deviceId) || compare(a.key, b.key))
}

/** Points per INSERT on PostgreSQL (three array parameters, whatever the count). */
const ARRAY_ROWS = 10_000

/** Pairs per read: each is two parameters. */
const READ_BATCH = 500

async function readSeriesIds(tx: Tx, series: readonly { deviceId: string; key: string }[], texts: TextByShape): Promise<Map<string, number>> {
  const ids = new Map<string, number>()
  for (let i = 0; i < series.length; i += READ_BATCH) {
    const byDevice = new Map<string, string[]>()
    for (const { deviceId, key } of series.slice(i, i + READ_BATCH)) byDevice.set(deviceId, [...(byDevice.get(deviceId) ?? []), key])
    const read = () =>
      tx
        .selectFrom('platform_telemetry_series')
        .select(['series_id', 'device_id', 'key'])
        .where((eb) => eb.or([...byDevice].map(([deviceId, keys]) => eb.and([eb('device_id', '=', deviceId), eb('key', 'in', keys)]))))
        .compile()
    const shape = `series:${[...byDevice.values()].map((keys) => keys.length).join(',')}`
    const { rows } = await tx.executeQuery(texts.compiled(shape, [...byDevice].flatMap(([deviceId, keys]) => [deviceId, ...keys]), read))
    for (const row of rows) ids.set(seriesKey(row.device_id, row.key), Number(row.series_id))
  }
  return ids
}

/** Rows per UPDATE of newest points: three parameters each. */
const NEWEST_BATCH = 1000

/**
 * Moves each series' newest point forward, never back (a point at the stored point's time
 * replaces it: the later write wins). Rows in series id order: concurrent writers lock series
 * rows in one global order, so they never deadlock.
 */
async function moveNewest(tx: Tx, series: (SeriesNewest & { seriesId: number })[], texts: TextByShape): Promise<void> {
  const sorted = [...series].sort((a, b) => a.seriesId - b.seriesId)
  for (let i = 0; i < sorted.length; i += NEWEST_BATCH) {
    const chunk = sorted.slice(i, i + NEWEST_BATCH)
    const update = () => {
      // The casts give PostgreSQL the column types of untyped parameters; SQLite takes them as they are.
      const rows = chunk.map((s) => sql`(cast(${s.seriesId} as bigint), cast(${s.ts} as bigint), cast(${s.value} as text))`)
      return tx
        .with('newest(series_id, ts, value)', () => sql<{ series_id: number; ts: number; value: string }>`(values ${sql.join(rows)})`)
        .updateTable('platform_telemetry_series')
        .from('newest')
        .set((eb) => ({ last_ts: eb.ref('newest.ts'), last_value: eb.ref('newest.value') }))
        .whereRef('platform_telemetry_series.series_id', '=', 'newest.series_id')
        .whereRef('newest.ts', '>=', 'platform_telemetry_series.last_ts')
        .compile()
    }
    await tx.executeQuery(texts.compiled(`newest:${chunk.length}`, chunk.flatMap((s) => [s.seriesId, s.ts, s.value]), update))
  }
}
