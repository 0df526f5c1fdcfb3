import { sql } from 'kysely'
import type { AnyDb, MigrationFactory } from './migration-context.js'

/**
 * What the platform summary reads without scanning history: an index on the devices' last
 * heartbeat (the online count is a range of it), one on device error logs by time (errors in the
 * last 24 h), and tallies of finished commands, filled here from the commands already stored.
 * Every step may run again over its own result.
 */
export const summaryCounts: MigrationFactory = () => ({
  async up(db: AnyDb) {
    await db.schema.createIndex('platform_devices_last_online').ifNotExists().on('platform_devices').column('last_online_at').execute()
    await db.schema.createIndex('platform_logs_level_ts').ifNotExists().on('platform_logs').columns(['source', 'level', 'ts']).execute()
    await db.schema
      .createTable('platform_command_tallies')
      .ifNotExists()
      .addColumn('status', 'varchar(16)', (c) => c.notNull())
      .addColumn('shard', 'integer', (c) => c.notNull())
      .addColumn('n', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('platform_command_tallies_pk', ['status', 'shard'])
      .execute()
    await db.deleteFrom('platform_command_tallies').execute()
    await db
      .insertInto('platform_command_tallies')
      .columns(['status', 'shard', 'n'])
      .expression((eb) =>
        eb
          .selectFrom('platform_commands')
          // Any shard will do: the summary sums a state's rows.
          .select(['status', sql<number>`0`.as('shard'), eb.fn.countAll().as('n')])
          .where('status', 'in', ['done', 'failed', 'expired'])
          .groupBy('status'),
      )
      .execute()
  },
  async down(db: AnyDb) {
    await db.schema.dropTable('platform_command_tallies').ifExists().execute()
    await db.schema.dropIndex('platform_logs_level_ts').ifExists().execute()
    await db.schema.dropIndex('platform_devices_last_online').ifExists().execute()
  },
})
