import { sql } from 'kysely'
import type { AnyDb, MigrationFactory } from './migration-context.js'

export const platform: MigrationFactory = (ctx) => ({
  async up(db: AnyDb) {
    await db.schema
      .createTable('platform_devices')
      // Byte order for device-list paging on PostgreSQL too (SQLite's default collation is binary).
      .addColumn('device_id', 'varchar(64)', (c) => (ctx.dialect === 'postgres' ? c.modifyFront(sql`collate "C"`) : c).primaryKey())
      .addColumn('model', 'varchar(64)')
      .addColumn('firmware_version', 'varchar(64)')
      .addColumn('ip', 'varchar(64)')
      .addColumn('token_hash', 'varchar(64)')
      .addColumn('expression', 'varchar(64)')
      .addColumn('uptime_s', 'double precision')
      .addColumn('rssi', 'double precision')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('last_online_at', 'bigint')
      .execute()

    // Points reference their series by a small integer: narrower rows and index entries make
    // ingest faster than repeating (device_id, key) in every point.
    await db.schema
      .createTable('platform_telemetry_series')
      .addColumn('series_id', ctx.autoIdType, ctx.autoId())
      .addColumn('device_id', 'varchar(64)', (c) => c.notNull())
      .addColumn('key', 'varchar(64)', (c) => c.notNull())
      .addColumn('last_ts', 'bigint', (c) => c.notNull())
      .addColumn('last_value', 'text', (c) => c.notNull())
      .addUniqueConstraint('platform_telemetry_series_device_key', ['device_id', 'key'])
      .execute()
    // Point ids are never exposed: SQLite's plain rowid is enough and cheaper.
    await db.schema
      .createTable('platform_telemetry')
      .addColumn('id', ctx.autoIdType, ctx.autoId({ mayReuse: true }))
      .addColumn('series_id', 'bigint', (c) => c.notNull())
      .addColumn('ts', 'bigint', (c) => c.notNull())
      .addColumn('value', 'text', (c) => c.notNull())
      .execute()
    await db.schema.createIndex('platform_telemetry_series_ts').on('platform_telemetry').columns(['series_id', 'ts']).execute()
    // Retention and the 24 h count.
    await db.schema.createIndex('platform_telemetry_ts').on('platform_telemetry').column('ts').execute()

    await db.schema
      .createTable('platform_commands')
      .addColumn('id', ctx.autoIdType, ctx.autoId())
      .addColumn('device_id', 'varchar(64)', (c) => c.notNull())
      .addColumn('action', 'varchar(32)', (c) => c.notNull())
      .addColumn('params', 'text', (c) => c.notNull())
      .addColumn('status', 'varchar(16)', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('delivered_at', 'bigint')
      .addColumn('acked_at', 'bigint')
      .addColumn('result', 'text')
      .addColumn('error', 'text')
      .execute()
    // Poll (a device's pending/delivered, oldest first) and the admin list filtered by device and status.
    await db.schema.createIndex('platform_commands_queue').on('platform_commands').columns(['device_id', 'status', 'id']).execute()
    await db.schema.createIndex('platform_commands_device').on('platform_commands').columns(['device_id', 'id']).execute()
    // Sweeps (expiry, failure) and the admin list filtered by status.
    await db.schema.createIndex('platform_commands_status').on('platform_commands').columns(['status', 'id']).execute()

    await db.schema
      .createTable('platform_configs')
      .addColumn('device_id', 'varchar(64)', (c) => c.primaryKey())
      .addColumn('config', 'text', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute()

    await db.schema
      .createTable('platform_logs')
      .addColumn('id', ctx.autoIdType, ctx.autoId())
      .addColumn('source', 'varchar(16)', (c) => c.notNull())
      .addColumn('device_id', 'varchar(64)')
      .addColumn('level', 'varchar(8)', (c) => c.notNull())
      .addColumn('tag', 'varchar(64)')
      .addColumn('message', 'text', (c) => c.notNull())
      .addColumn('ts', 'bigint', (c) => c.notNull())
      .execute()
    // Newest-first lists by source or by device; `before` pages on id.
    await db.schema.createIndex('platform_logs_source').on('platform_logs').columns(['source', 'id']).execute()
    await db.schema.createIndex('platform_logs_device').on('platform_logs').columns(['device_id', 'id']).execute()
    // Retention and the 24 h error count.
    await db.schema.createIndex('platform_logs_ts').on('platform_logs').column('ts').execute()

    await db.schema
      .createTable('platform_bind_codes')
      .addColumn('device_id', 'varchar(64)', (c) => c.primaryKey())
      .addColumn('code', 'varchar(6)', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute()
    await db.schema.createIndex('platform_bind_codes_code').on('platform_bind_codes').column('code').execute()

    await db.schema
      .createTable('platform_bindings')
      .addColumn('device_id', 'varchar(64)', (c) => c.primaryKey())
      .addColumn('user_id', 'varchar(128)', (c) => c.notNull())
      .addColumn('bound_at', 'bigint', (c) => c.notNull())
      .execute()
    await db.schema.createIndex('platform_bindings_user').on('platform_bindings').column('user_id').execute()
  },
  async down(db: AnyDb) {
    for (const table of [
      'platform_bindings',
      'platform_bind_codes',
      'platform_logs',
      'platform_configs',
      'platform_commands',
      'platform_telemetry',
      'platform_telemetry_series',
      'platform_devices',
    ]) {
      await db.schema.dropTable(table).execute()
    }
  },
})
