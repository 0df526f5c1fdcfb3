import { sql } from 'kysely'
import type { AnyDb, MigrationFactory } from './migration-context.js'

/**
 * Tallies per minute of telemetry points and of device error logs (`platform_window_tallies`),
 * filled here from the rows already stored: the summary's 24 h counts read them instead of a
 * day of rows (on PostgreSQL, freshly written rows are not all-visible, so even an index-only
 * count of them reads the heap). Runs again over its own result.
 */
export const windowTallies: MigrationFactory = () => ({
  async up(db: AnyDb) {
    await db.schema
      .createTable('platform_window_tallies')
      .ifNotExists()
      .addColumn('kind', 'varchar(16)', (c) => c.notNull())
      .addColumn('bucket', 'bigint', (c) => c.notNull())
      .addColumn('shard', 'integer', (c) => c.notNull())
      .addColumn('n', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('platform_window_tallies_pk', ['kind', 'bucket', 'shard'])
      .execute()
    await db.deleteFrom('platform_window_tallies').execute()
    // Literals, not parameters: PostgreSQL matches the GROUP BY expression to the selected one by its text.
    await sql`
      insert into platform_window_tallies (kind, bucket, shard, n)
      select 'telemetry', ts / 60000 * 60000, 0, count(*) from platform_telemetry group by ts / 60000 * 60000`.execute(db)
    await sql`
      insert into platform_window_tallies (kind, bucket, shard, n)
      select 'device_errors', ts / 60000 * 60000, 0, count(*) from platform_logs
      where source = 'device' and level = 'error' group by ts / 60000 * 60000`.execute(db)
  },
  async down(db: AnyDb) {
    await db.schema.dropTable('platform_window_tallies').ifExists().execute()
  },
})
