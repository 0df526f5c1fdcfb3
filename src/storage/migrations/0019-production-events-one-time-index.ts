import type { AnyDb, MigrationFactory } from './migration-context.js'

/**
 * `production_events` keeps one index by time, (device_id, ts): every reader of raw events by
 * kind (the figures, the KPI gate, placements before an offer) reads rows of one machine in a
 * time range and, placements being most of the events, filters the kind as cheaply on those rows
 * as 0016's (device_id, kind, ts) found them, which cost every insert a third index.
 */
export const productionEventsOneTimeIndex: MigrationFactory = () => ({
  async up(db: AnyDb) {
    await db.schema.dropIndex('production_events_device_kind_ts').execute()
  },
  async down(db: AnyDb) {
    await db.schema.createIndex('production_events_device_kind_ts').on('production_events').columns(['device_id', 'kind', 'ts']).execute()
  },
})
