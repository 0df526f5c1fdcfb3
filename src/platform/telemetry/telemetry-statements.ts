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
 * Creates the series not recorded yet, each with its newest point, returning their ids. An
 * existing series is left alone and not locked (its newest point moves in `newestUpdate`, last
 * in the transaction): a series another writer records meanwhile comes back missing.
 */
export const seriesInsert = (db: Db) =>
  new MultiRowInsert(SERIES_COLUMNS, (rows: SeriesRow[]) =>
    db
      .insertInto('platform_telemetry_series')
      .values(rows)
      .onConflict((oc) => oc.columns(['device_id', 'key']).doNothing())
      .returning(['series_id', 'device_id', 'key']),
  )
