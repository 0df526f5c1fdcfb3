import type { Database } from '../../storage/database.js'
import { insertColumns, MultiRowInsert, type InsertRow } from '../../storage/multi-row-insert.js'
import type { Db } from '../../storage/storage.js'

type PointTable = Database['platform_telemetry']
type SeriesTable = Database['platform_telemetry_series']
export type PointRow = InsertRow<PointTable>
export type SeriesRow = InsertRow<SeriesTable>

export const POINT_COLUMNS = insertColumns<PointTable>()('series_id', 'ts', 'value')
export const SERIES_COLUMNS = insertColumns<SeriesTable>()('device_id', 'key', 'last_ts', 'last_value')

/** Inserts points. */
export const pointInsert = (db: Db) => new MultiRowInsert(POINT_COLUMNS, (rows: PointRow[]) => db.insertInto('platform_telemetry').values(rows))

/**
 * Creates missing series and moves each one's newest point forward (never back), returning
 * their ids. A series may appear once per statement (PostgreSQL refuses to update a row twice).
 */
export const seriesUpsert = (db: Db) =>
  new MultiRowInsert(SERIES_COLUMNS, (rows: SeriesRow[]) =>
    db
      .insertInto('platform_telemetry_series')
      .values(rows)
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
      .returning(['series_id', 'device_id', 'key']),
  )
