import { CompiledQuery } from 'kysely'
import { AppError } from '../../errors.js'
import type { Db, Tx } from '../../storage/storage.js'
import type { TelemetryRecord, TelemetryValue } from './telemetry-schemas.js'

/** Rows per INSERT: 3 parameters each keeps us far below both engines' parameter limits. */
const CHUNK_ROWS = 1000
const POINT_COLUMNS = 3
const MAX_CACHED_STATEMENTS = 256

/** SQL text by row count: a multi-row statement's text depends only on how many rows it has. */
class SqlByRowCount {
  private readonly texts = new Map<number, string>()
  constructor(private readonly compile: (rows: number) => string) {}

  get(rows: number): string {
    let sql = this.texts.get(rows)
    if (sql === undefined) {
      sql = this.compile(rows)
      if (this.texts.size >= MAX_CACHED_STATEMENTS) this.texts.clear()
      this.texts.set(rows, sql)
    }
    return sql
  }
}

/** A record whose time is settled (its own `ts`, or the time of receipt). */
export type TimedRecord = TelemetryRecord & { ts: number }

export type Series = Record<string, [number, TelemetryValue][]>

interface Newest {
  ts: number
  value: string
}

/** Batches written in one transaction at most. */
const MAX_GROUP = 64
/**
 * Points waiting behind the commit under way, at most (about 100 bytes each). Beyond, a batch is
 * refused with 503 `server_busy` rather than held: memory stays bounded when the database falls
 * behind. A batch larger than this is still taken when nothing waits.
 */
export const MAX_QUEUED_POINTS = 200_000

interface EncodedBatch {
  deviceId: string
  /** Per key, its newest point in the batch. */
  newest: Map<string, Newest>
  /** [key, ts, JSON value] per point. */
  points: [string, number, string][]
}

const seriesKey = (deviceId: string, key: string) => `${deviceId}\u0000${key}`
const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

interface Pending {
  batch: EncodedBatch
  resolve(points: number): void
  reject(err: unknown): void
}

function encodeBatch(deviceId: string, records: TimedRecord[]): EncodedBatch {
  const newest = new Map<string, Newest>()
  const points: [string, number, string][] = []
  for (const { ts, values } of records) {
    for (const key in values) {
      const value = JSON.stringify(values[key])
      points.push([key, ts, value])
      const seen = newest.get(key)
      if (seen === undefined || ts >= seen.ts) newest.set(key, { ts, value })
    }
  }
  return { deviceId, newest, points }
}

/**
 * Telemetry: a series per (device, key) holding its newest point, and one row per point.
 * Ingest is the hot path: per batch, one upsert of the batch's series (which also yields
 * their ids) and one multi-row INSERT of the points, in one transaction. Both statements
 * are built with Kysely once per row count and their SQL reused.
 */
export class TelemetryStore {
  private readonly queue: Pending[] = []
  private queuedPoints = 0
  private writing = 0
  private starting = 0
  private readonly writers: number
  private readonly maxQueuedPoints: number
  private readonly gatherTurn: boolean
  private readonly insertPoints: SqlByRowCount
  private readonly upsertSeries: SqlByRowCount

  /**
   * `writers`: group commits under way at once (see `Storage.concurrentWriters`);
   * `maxQueuedPoints`: points that may wait for a writer before batches get `server_busy`;
   * `gatherTurn`: writers wait for the end of the event loop's turn (see `startWriter`).
   */
  constructor(
    private readonly db: Db,
    options: { writers?: number; maxQueuedPoints?: number; gatherTurn?: boolean } = {},
  ) {
    this.writers = Math.max(1, options.writers ?? 1)
    this.gatherTurn = options.gatherTurn ?? false
    this.maxQueuedPoints = options.maxQueuedPoints ?? MAX_QUEUED_POINTS
    this.insertPoints = new SqlByRowCount((rows) => insertPointsQuery(db, rows).compile().sql)
    this.upsertSeries = new SqlByRowCount((rows) => upsertSeriesQuery(db, rows).compile().sql)
  }

  /**
   * Stores every point of the records, all or nothing; resolves after the commit. Returns the
   * point count. Batches that arrive while the writers are busy are written together in one
   * transaction by the next free writer (group commit): each commit rewrites the same hot index
   * pages, so fewer, larger transactions do far less work. On PostgreSQL several writers commit
   * at once, so one commit's round trips and fsync no longer hold back every other batch. A
   * group that fails is retried batch by batch, so one batch's failure never fails another's. Rejects with `server_busy` (nothing stored) when the queue is full.
   */
  insert(deviceId: string, records: TimedRecord[]): Promise<number> {
    const batch = encodeBatch(deviceId, records)
    if (batch.points.length === 0) return Promise.resolve(0)
    if (this.queuedPoints > 0 && this.queuedPoints + batch.points.length > this.maxQueuedPoints) {
      return Promise.reject(new AppError('server_busy', 'Telemetry is arriving faster than it can be stored; retry shortly', { retry_after: 1 }))
    }
    this.queuedPoints += batch.points.length
    return new Promise((resolve, reject) => {
      this.queue.push({ batch, resolve, reject })
      this.startWriter()
    })
  }

  /**
   * With `gatherTurn` a writer starts at the end of this turn of the event loop, not at once:
   * on SQLite a transaction runs synchronously, so one started at once would commit each
   * request's batch alone before the next request of the same turn is even parsed. Waiting one
   * turn lets the batches of every request that arrived together share one commit. Without it
   * (PostgreSQL) a writer starts at once: commits wait on the network, so groups form by
   * themselves, and a batch waiting for a row lock keeps only its own group waiting.
   */
  private startWriter(): void {
    if (this.writing + this.starting >= this.writers) return
    if (!this.gatherTurn) return void this.writer()
    this.starting++
    setImmediate(() => {
      this.starting--
      void this.writer()
    })
  }

  /** One writer: commits groups from the queue until it is empty. */
  private async writer(): Promise<void> {
    this.writing++
    try {
      while (this.queue.length > 0) {
        const group = this.queue.splice(0, MAX_GROUP)
        for (const { batch } of group) this.queuedPoints -= batch.points.length
        try {
          await this.db.transaction().execute((tx) => this.write(tx, group.map((p) => p.batch)))
          for (const { batch, resolve } of group) resolve(batch.points.length)
        } catch (err) {
          if (group.length === 1) group[0]!.reject(err)
          else for (const pending of group) await this.writeAlone(pending)
        }
      }
    } finally {
      this.writing--
    }
  }

  private async writeAlone({ batch, resolve, reject }: Pending): Promise<void> {
    try {
      await this.db.transaction().execute((tx) => this.write(tx, [batch]))
      resolve(batch.points.length)
    } catch (err) {
      reject(err)
    }
  }

  private async write(tx: Tx, batches: EncodedBatch[]): Promise<void> {
    const ids = await this.seriesIds(tx, batches)
    const params: unknown[] = []
    for (const { deviceId, points } of batches) {
      for (const [key, ts, value] of points) params.push(ids.get(seriesKey(deviceId, key)), ts, value)
    }
    const total = params.length / POINT_COLUMNS
    for (let start = 0; start < total; start += CHUNK_ROWS) {
      const rows = Math.min(CHUNK_ROWS, total - start)
      const slice = params.slice(start * POINT_COLUMNS, (start + rows) * POINT_COLUMNS)
      await tx.executeQuery(CompiledQuery.raw(this.insertPoints.get(rows), slice))
    }
  }

  /**
   * Creates the group's missing series, moves each series' newest point forward, and returns
   * the ids by (device, key). One upsert for the whole group, its rows in (device, key) order:
   * concurrent writers (and instances) lock series rows in one global order, so they never
   * deadlock, and a series appears once per statement, as PostgreSQL requires.
   */
  private async seriesIds(tx: Tx, batches: EncodedBatch[]): Promise<Map<string, number>> {
    const newest = new Map<string, { deviceId: string; key: string } & Newest>()
    for (const batch of batches) {
      for (const [key, point] of batch.newest) {
        const id = seriesKey(batch.deviceId, key)
        const seen = newest.get(id)
        if (seen === undefined || point.ts >= seen.ts) newest.set(id, { deviceId: batch.deviceId, key, ...point })
      }
    }
    const series = [...newest.values()].sort((a, b) => compare(a.deviceId, b.deviceId) || compare(a.key, b.key))
    const ids = new Map<string, number>()
    for (let start = 0; start < series.length; start += CHUNK_ROWS) {
      const chunk = series.slice(start, start + CHUNK_ROWS)
      const params: unknown[] = []
      for (const { deviceId, key, ts, value } of chunk) params.push(deviceId, key, ts, value)
      const { rows } = await tx.executeQuery<{ series_id: number; device_id: string; key: string }>(CompiledQuery.raw(this.upsertSeries.get(chunk.length), params))
      for (const row of rows) ids.set(seriesKey(row.device_id, row.key), row.series_id)
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

  /** Deletes up to `batch` points older than `cutoff`; returns how many. */
  async pruneBatch(cutoff: number, batch: number): Promise<number> {
    const result = await this.db
      .deleteFrom('platform_telemetry')
      .where('id', 'in', (eb) => eb.selectFrom('platform_telemetry').select('id').where('ts', '<', cutoff).limit(batch))
      .executeTakeFirst()
    return Number(result.numDeletedRows)
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

const insertPointsQuery = (db: Db, rows: number) =>
  db.insertInto('platform_telemetry').values(Array.from({ length: rows }, () => ({ series_id: 0, ts: 0, value: '' })))

/** Upserts `rows` series (device_id, key, last_ts, last_value), returning their ids. */
const upsertSeriesQuery = (db: Db, rows: number) =>
  db
    .insertInto('platform_telemetry_series')
    .values(Array.from({ length: rows }, () => ({ device_id: '', key: '', last_ts: 0, last_value: '' })))
    .onConflict((oc) =>
      oc.columns(['device_id', 'key']).doUpdateSet((eb) => {
        // Right-hand sides see the row as it was, so both columns test the same condition.
        const newer = eb('excluded.last_ts', '>=', eb.ref('platform_telemetry_series.last_ts'))
        return {
          last_ts: eb.case().when(newer).then(eb.ref('excluded.last_ts')).else(eb.ref('platform_telemetry_series.last_ts')).end(),
          last_value: eb.case().when(newer).then(eb.ref('excluded.last_value')).else(eb.ref('platform_telemetry_series.last_value')).end(),
        }
      }),
    )
    .returning(['series_id', 'device_id', 'key'])
