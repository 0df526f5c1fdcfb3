import { AppError } from '../../errors.js'
import { GroupCommit } from '../../storage/group-commit.js'
import { pruneOldest, type PruneStep } from '../../storage/prune-step.js'
import type { Db, RowId, Storage, Tx } from '../../storage/storage.js'
import { encodeBatch, seriesKey, type EncodedBatch, type NewestPoint, type TimedRecord } from './telemetry-batch.js'
import type { TelemetryValue } from './telemetry-schemas.js'
import { pointInsert, seriesUpsert, type PointRow, type SeriesRow } from './telemetry-statements.js'

export type { TimedRecord } from './telemetry-batch.js'

export type Series = Record<string, [number, TelemetryValue][]>

/**
 * Points waiting behind the commits under way, at most (about 100 bytes each). Beyond, a batch
 * is refused with 503 `server_busy` rather than held.
 */
export const MAX_QUEUED_POINTS = 200_000

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/**
 * Telemetry: a series per (device, key) holding its newest point, and one row per point.
 * Ingest is the hot path: batches are group-committed (see `GroupCommit`); per group, one
 * upsert of its series (which also yields their ids) and one multi-row INSERT of the points,
 * in one transaction.
 */
export class TelemetryStore {
  private readonly commits: GroupCommit<EncodedBatch>
  private readonly insertPoints: ReturnType<typeof pointInsert>
  private readonly upsertSeries: ReturnType<typeof seriesUpsert>

  /**
   * `writers`: group commits under way at once (see `Storage.concurrentWriters`);
   * `maxQueuedPoints`: points that may wait for a writer before batches get `server_busy`;
   * `gatherTurn`: writers wait for the end of the event loop's turn (see `Storage.synchronousWrites`);
   * `storage.rowId` names a point when pruning (points have no key of their own).
   */
  private readonly db: Db
  private readonly rowId: RowId
  constructor(storage: Pick<Storage, 'db' | 'rowId'>, options: { writers?: number; maxQueuedPoints?: number; gatherTurn?: boolean } = {}) {
    const { db } = storage
    this.db = db
    this.rowId = storage.rowId
    this.insertPoints = pointInsert(db)
    this.upsertSeries = seriesUpsert(db)
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
   * commit. Rejects with `server_busy` (nothing stored) when too many points wait already.
   */
  insert(deviceId: string, records: TimedRecord[]): Promise<number> {
    const batch = encodeBatch(deviceId, records)
    if (batch.points.length === 0) return Promise.resolve(0)
    return this.commits.submit(batch, batch.points.length).then(() => batch.points.length)
  }

  private async write(tx: Tx, batches: EncodedBatch[]): Promise<void> {
    const ids = await this.seriesIds(tx, batches)
    const rows: PointRow[] = []
    for (const { deviceId, points } of batches) {
      for (const [key, ts, value] of points) rows.push({ series_id: ids.get(seriesKey(deviceId, key))!, ts, value })
    }
    for (const statement of this.insertPoints.statements(rows)) await tx.executeQuery(statement)
  }

  /**
   * Creates the group's missing series, moves each series' newest point forward, and returns
   * the ids by (device, key). One upsert for the whole group, its rows in (device, key) order:
   * concurrent writers (and instances) lock series rows in one global order, so they never
   * deadlock, and a series appears once per statement, as PostgreSQL requires.
   */
  private async seriesIds(tx: Tx, batches: EncodedBatch[]): Promise<Map<string, number>> {
    const newest = new Map<string, { deviceId: string; key: string } & NewestPoint>()
    for (const batch of batches) {
      for (const [key, point] of batch.newest) {
        const id = seriesKey(batch.deviceId, key)
        const seen = newest.get(id)
        if (seen === undefined || point.ts >= seen.ts) newest.set(id, { deviceId: batch.deviceId, key, ...point })
      }
    }
    const series = [...newest.values()].sort((a, b) => compare(a.deviceId, b.deviceId) || compare(a.key, b.key))
    const rows = series.map((s): SeriesRow => ({ device_id: s.deviceId, key: s.key, last_ts: s.ts, last_value: s.value }))
    const ids = new Map<string, number>()
    for (const statement of this.upsertSeries.statements(rows)) {
      for (const row of (await tx.executeQuery(statement)).rows) ids.set(seriesKey(row.device_id, row.key), row.series_id)
    }
    return ids
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

  /** Points with a time at or after `since`. */
  async countSince(since: number): Promise<number> {
    const row = await this.db
      .selectFrom('platform_telemetry')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('ts', '>=', since)
      .executeTakeFirstOrThrow()
    return Number(row.n)
  }

  /** Deletes up to `batch` of the oldest points older than `cutoff`, from `from` on (see `pruneOldest`). */
  pruneBatch(cutoff: number, batch: number, from?: number): Promise<PruneStep> {
    return pruneOldest(this.db, 'platform_telemetry', cutoff, batch, from, this.rowId)
  }
}

/** Removes every series and point of the device; call inside the device's delete transaction. */
export async function deleteDeviceTelemetry(tx: Tx, deviceId: string): Promise<void> {
  await tx
    .deleteFrom('platform_telemetry')
    .where('series_id', 'in', (eb) => eb.selectFrom('platform_telemetry_series').select('series_id').where('device_id', '=', deviceId))
    .execute()
  await tx.deleteFrom('platform_telemetry_series').where('device_id', '=', deviceId).execute()
}
