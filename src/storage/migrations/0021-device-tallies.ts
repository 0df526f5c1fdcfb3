import { sql } from 'kysely'
import type { AnyDb, MigrationFactory } from './migration-context.js'

/**
 * The number of platform devices as rows per shard (`platform_device_tallies`), filled here from
 * the devices already stored: the summary's total sums a few rows instead of counting the table
 * (10–18 ms over 100,000 devices on PostgreSQL, even index-only). Runs again over its own result.
 */
export const deviceTallies: MigrationFactory = () => ({
  async up(db: AnyDb) {
    await db.schema
      .createTable('platform_device_tallies')
      .ifNotExists()
      .addColumn('shard', 'integer', (c) => c.primaryKey())
      .addColumn('n', 'bigint', (c) => c.notNull())
      .execute()
    await db.deleteFrom('platform_device_tallies').execute()
    await sql`insert into platform_device_tallies (shard, n) select 0, count(*) from platform_devices`.execute(db)
  },
  async down(db: AnyDb) {
    await db.schema.dropTable('platform_device_tallies').ifExists().execute()
  },
})
