import type { AnyDb, MigrationFactory } from './migration-context.js'

export const foundation: MigrationFactory = (ctx) => ({
  async up(db: AnyDb) {
    await db.schema
      .createTable('settings')
      .addColumn('key', 'varchar(128)', (c) => c.primaryKey())
      .addColumn('value', 'text', (c) => c.notNull())
      .execute()
    await db.schema
      .createTable('users')
      .addColumn('id', 'varchar(128)', (c) => c.primaryKey())
      .addColumn('username', 'varchar(128)', (c) => c.notNull().unique())
      .addColumn('display_name', 'text', (c) => c.notNull())
      .addColumn('role', 'varchar(16)', (c) => c.notNull())
      .addColumn('avatar_url', 'text')
      .addColumn('provider', 'varchar(32)')
      .addColumn('created_at', 'double precision', (c) => c.notNull())
      .addColumn('updated_at', 'double precision', (c) => c.notNull())
      .execute()
    await db.schema
      .createTable('audit_log')
      .addColumn('id', ctx.autoIdType, ctx.autoId())
      .addColumn('at', 'double precision', (c) => c.notNull())
      .addColumn('actor', 'varchar(128)', (c) => c.notNull())
      .addColumn('action', 'varchar(64)', (c) => c.notNull())
      .addColumn('release_id', 'varchar(64)')
      .addColumn('device_id', 'varchar(64)')
      .addColumn('outcome', 'varchar(32)', (c) => c.notNull())
      .addColumn('detail', 'text', (c) => c.notNull())
      .execute()
    await db.schema
      .createTable('login_failures')
      .addColumn('id', ctx.autoIdType, ctx.autoId())
      .addColumn('key', 'varchar(512)', (c) => c.notNull())
      .addColumn('at', 'bigint', (c) => c.notNull())
      .execute()
    await db.schema.createIndex('login_failures_key_at').on('login_failures').columns(['key', 'at']).execute()
    await db.schema.createIndex('login_failures_at').on('login_failures').column('at').execute()
    await db.schema.createIndex('audit_log_action').on('audit_log').columns(['action', 'id']).execute()
    await db.schema.createIndex('audit_log_release').on('audit_log').columns(['release_id', 'id']).execute()
  },
  async down(db: AnyDb) {
    await db.schema.dropTable('login_failures').execute()
    await db.schema.dropTable('audit_log').execute()
    await db.schema.dropTable('users').execute()
    await db.schema.dropTable('settings').execute()
  },
})
