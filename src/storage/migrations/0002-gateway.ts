import { sql } from 'kysely'
import type { AnyDb, MigrationFactory } from './migration-context.js'

export const gateway: MigrationFactory = (ctx) => ({
  async up(db: AnyDb) {
    // Device ids sort and compare in byte order on both engines (SQLite's default BINARY collation).
    const deviceId = ctx.dialect === 'postgres' ? sql`varchar(64) collate "C"` : sql`varchar(64)`
    await db.schema
      .createTable('devices')
      .addColumn('device_id', deviceId, (c) => c.primaryKey())
      .addColumn('hostname', 'text', (c) => c.notNull())
      .addColumn('ip', 'text', (c) => c.notNull())
      .addColumn('version', 'text', (c) => c.notNull())
      .addColumn('key_hash', 'varchar(128)')
      .addColumn('last_status', 'text', (c) => c.notNull().defaultTo('{}'))
      .addColumn('connect_time', 'double precision')
      .addColumn('last_heartbeat', 'double precision')
      .addColumn('link_instance', 'varchar(64)')
      .addColumn('link_id', 'varchar(64)')
      .addColumn('created_at', 'double precision', (c) => c.notNull())
      .execute()
    await db.schema
      .createTable('user_device_bindings')
      .addColumn('id', ctx.autoIdType, ctx.autoId())
      .addColumn('username', 'varchar(128)', (c) => c.notNull())
      .addColumn('user_id', 'varchar(128)', (c) => c.notNull())
      .addColumn('device_id', deviceId, (c) => c.notNull().references('devices.device_id').onDelete('cascade'))
      .addColumn('created_at', 'double precision', (c) => c.notNull())
      .addUniqueConstraint('user_device_bindings_user_device', ['username', 'device_id'])
      .execute()
    await db.schema.createIndex('user_device_bindings_device').on('user_device_bindings').column('device_id').execute()
  },
  async down(db: AnyDb) {
    await db.schema.dropTable('user_device_bindings').execute()
    await db.schema.dropTable('devices').execute()
  },
})
