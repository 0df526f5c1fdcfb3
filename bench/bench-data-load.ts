/**
 * The data of the data benchmark, written straight into the database (SQL, not HTTP): platform
 * devices, a year of telemetry for some of them, commands and logs as a year of use leaves them.
 * Points are generated inside the database (a recursive CTE, the same SQL on SQLite and
 * PostgreSQL) in time order, as ingest writes them.
 */
import { sql } from 'kysely'
import type { Db, Tx } from '../src/storage/storage.js'

export const DAY_MS = 86_400_000
export const SPAN_DAYS = 365
export const KEYS = ['temp', 'humidity', 'voltage', 'current'] as const

export interface DataShape {
  devices: number
  telemetryDevices: number
  points: number
  commands: number
  logs: number
}

export interface LoadedData {
  /** Every platform device id, in id order. */
  deviceIds: string[]
  /** The devices that carry telemetry. */
  telemetryIds: string[]
  pointsPerSeries: number
  /** The oldest and newest point times. */
  start: number
  end: number
}

export const deviceId = (i: number) => `pd-${String(i).padStart(7, '0')}`

const ROWS_PER_INSERT = 1000
/** Time steps per INSERT … SELECT (× series rows). */
const STEPS_PER_CHUNK = 100

async function insertChunks<T>(db: Db, rows: T[], insert: (tx: Tx, chunk: T[]) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < rows.length; i += ROWS_PER_INSERT * 20) {
    const slice = rows.slice(i, i + ROWS_PER_INSERT * 20)
    await db.transaction().execute(async (tx) => {
      for (let j = 0; j < slice.length; j += ROWS_PER_INSERT) await insert(tx, slice.slice(j, j + ROWS_PER_INSERT))
    })
  }
}

export async function loadData(db: Db, shape: DataShape, now: number, progress: (what: string) => void): Promise<LoadedData> {
  const deviceIds = Array.from({ length: shape.devices }, (_, i) => deviceId(i))
  const every = Math.max(1, Math.floor(shape.devices / shape.telemetryDevices))
  const telemetryIds = deviceIds.filter((_, i) => i % every === 0).slice(0, shape.telemetryDevices)
  const pointsPerSeries = Math.max(1, Math.floor(shape.points / (telemetryIds.length * KEYS.length)))
  const end = now - 60_000
  const start = end - SPAN_DAYS * DAY_MS
  const step = Math.floor((end - start) / pointsPerSeries)

  // A third of the devices heartbeat within the last minutes (online under the bench's 1 h threshold).
  await insertChunks(db, deviceIds, (tx, ids) =>
    tx
      .insertInto('platform_devices')
      .values(
        ids.map((id, k) => ({
          device_id: id,
          model: 'bench-sensor',
          firmware_version: '1.4.2',
          ip: '10.0.0.1',
          token_hash: null,
          expression: null,
          uptime_s: 3600,
          rssi: -60,
          created_at: start,
          last_online_at: (id.charCodeAt(id.length - 1) + k) % 3 === 0 ? now - 600_000 : now - 30 * DAY_MS,
        })),
      )
      .execute(),
  )
  progress(`${deviceIds.length} devices`)

  const jitter = (seriesIndex: number) => (seriesIndex * 7919) % Math.max(1, step)
  const series = telemetryIds.flatMap((id) => KEYS.map((key) => ({ id, key })))
  await insertChunks(db, series.map((s, i) => ({ ...s, i })), (tx, rows) =>
    tx
      .insertInto('platform_telemetry_series')
      .values(rows.map(({ id, key, i }) => ({ device_id: id, key, last_ts: start + (pointsPerSeries - 1) * step + jitter(i + 1), last_value: '20' })))
      .execute(),
  )
  // Series ids are 1…n in insertion order on both engines (fresh tables); jitter uses the id.
  for (let first = 0; first < pointsPerSeries; first += STEPS_PER_CHUNK) {
    const last = Math.min(pointsPerSeries, first + STEPS_PER_CHUNK) - 1
    await sql`
      with recursive steps(j) as (select cast(${first} as bigint) union all select j + 1 from steps where j < ${last})
      insert into platform_telemetry (series_id, ts, value)
      select s.series_id, cast(${start} as bigint) + steps.j * ${step} + (s.series_id * 7919) % ${Math.max(1, step)}, cast(20 + (steps.j * 7 + s.series_id) % 100 as text)
      from steps cross join platform_telemetry_series s
      order by steps.j, s.series_id`.execute(db)
    if (last === pointsPerSeries - 1 || (first / STEPS_PER_CHUNK) % 5 === 4) progress(`${((last + 1) * series.length).toLocaleString('en-US')} points`)
  }

  // Commands: mostly history (done, some failed or expired), a few queued in the last hour.
  const commands = Array.from({ length: shape.commands }, (_, i) => {
    const queued = i >= shape.commands - Math.min(300, Math.floor(shape.commands / 100))
    const created = queued ? now - 600_000 - (i % 3000) * 1000 : start + Math.floor(((end - start) * i) / shape.commands)
    const status = queued ? (i % 3 === 0 ? 'delivered' : 'pending') : i % 50 === 0 ? 'failed' : i % 97 === 0 ? 'expired' : 'done'
    return {
      device_id: deviceIds[(i * 37) % deviceIds.length]!,
      action: 'ping',
      params: '{}',
      status,
      attempts: status === 'pending' ? 0 : 1,
      created_at: created,
      delivered_at: status === 'pending' || status === 'expired' ? null : created + 1000,
      acked_at: status === 'done' ? created + 2000 : null,
      result: null,
      error: status === 'failed' ? 'bench' : null,
    }
  })
  await insertChunks(db, commands, (tx, rows) => tx.insertInto('platform_commands').values(rows).execute())
  progress(`${shape.commands} commands`)

  const logs = Array.from({ length: shape.logs }, (_, i) => ({
    source: i % 20 === 0 ? 'operation' : 'device',
    device_id: deviceIds[(i * 13) % deviceIds.length]!,
    level: i % 33 === 0 ? 'error' : i % 14 === 0 ? 'warn' : 'info',
    tag: 'bench',
    message: `bench log entry ${i}`,
    ts: start + Math.floor(((end - start) * i) / shape.logs),
  }))
  await insertChunks(db, logs, (tx, rows) => tx.insertInto('platform_logs').values(rows).execute())
  progress(`${shape.logs} logs`)
  return { deviceIds, telemetryIds, pointsPerSeries, start, end }
}

/**
 * `points` more points over the last 24 h on the series loaded, written after the load's VACUUM:
 * as ingest leaves a day of points, not yet all-visible on PostgreSQL (an index-only count of
 * them still reads the heap), which the summary's 24 h counts read.
 */
export async function loadLastDay(db: Db, points: number, now: number, progress: (what: string) => void): Promise<void> {
  const series = Number((await db.selectFrom('platform_telemetry_series').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n)
  const perSeries = Math.max(1, Math.floor(points / Math.max(1, series)))
  const start = now - DAY_MS + 60_000
  const step = Math.max(1, Math.floor((DAY_MS - 120_000) / perSeries))
  for (let first = 0; first < perSeries; first += STEPS_PER_CHUNK) {
    const last = Math.min(perSeries, first + STEPS_PER_CHUNK) - 1
    await sql`
      with recursive steps(j) as (select cast(${first} as bigint) union all select j + 1 from steps where j < ${last})
      insert into platform_telemetry (series_id, ts, value)
      select s.series_id, cast(${start} as bigint) + steps.j * ${step} + (s.series_id * 7919) % ${step}, '21'
      from steps cross join platform_telemetry_series s
      order by steps.j, s.series_id`.execute(db)
  }
  progress(`${(perSeries * series).toLocaleString('en-US')} points of the last 24 h`)
}
