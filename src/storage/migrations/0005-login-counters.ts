import type { AnyDb, MigrationFactory } from './migration-context.js'

/** Login throttling as one counter row per key, updated by a single atomic statement. */
export const loginCounters: MigrationFactory = (ctx) => ({
  async up(db: AnyDb) {
    await db.schema
      .createTable('login_counters')
      .addColumn('key', 'varchar(512)', (c) => c.primaryKey())
      .addColumn('failures', 'integer', (c) => c.notNull())
      .addColumn('window_start', 'bigint', (c) => c.notNull())
      .execute()
    await db.schema.createIndex('login_counters_window_start').on('login_counters').column('window_start').execute()
    await db.schema.dropTable('login_failures').execute()
  },
  async down(db: AnyDb) {
    await db.schema.dropTable('login_counters').execute()
    await db.schema
      .createTable('login_failures')
      .addColumn('id', ctx.autoIdType, ctx.autoId())
      .addColumn('key', 'varchar(512)', (c) => c.notNull())
      .addColumn('at', 'bigint', (c) => c.notNull())
      .execute()
  },
})
