import { sql } from 'kysely'
import type { AnyDb, MigrationFactory } from './migration-context.js'

/**
 * SQLite's telemetry points lose their index on time, written with every point, for the time
 * bounds of each range of row ids (`platform_telemetry_ranges`, see `point-ranges.ts`), summarized
 * here from the points stored. PostgreSQL keeps its index: nothing changes there.
 */
export const pointRanges: MigrationFactory = (ctx) => ({
  async up(db: AnyDb) {
    if (ctx.dialect !== 'sqlite') return
    await db.schema
      .createTable('platform_telemetry_ranges')
      .addColumn('range_id', 'integer', (c) => c.primaryKey())
      .addColumn('min_ts', 'bigint', (c) => c.notNull())
      .addColumn('max_ts', 'bigint', (c) => c.notNull())
      .execute()
    // The summary's edge minute reads the ranges holding points that recent, not all of them.
    await db.schema.createIndex('platform_telemetry_ranges_max_ts').on('platform_telemetry_ranges').column('max_ts').execute()
    // 1024: RANGE_ROWS when this was written.
    await sql`
      insert into platform_telemetry_ranges (range_id, min_ts, max_ts)
      select rowid / 1024, min(ts), max(ts) from platform_telemetry group by rowid / 1024`.execute(db)
    await db.schema.dropIndex('platform_telemetry_ts').execute()
  },
  async down(db: AnyDb) {
    if (ctx.dialect !== 'sqlite') return
    await db.schema.createIndex('platform_telemetry_ts').on('platform_telemetry').column('ts').execute()
    await db.schema.dropTable('platform_telemetry_ranges').execute()
  },
})
