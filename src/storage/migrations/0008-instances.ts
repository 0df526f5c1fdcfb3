import type { AnyDb, MigrationFactory } from './migration-context.js'

/** Several instances: each one's last sign of life, so the others can tell when it died (§13 presence). */
export const instances: MigrationFactory = () => ({
  async up(db: AnyDb) {
    await db.schema
      .createTable('instances')
      .addColumn('instance_id', 'varchar(128)', (c) => c.primaryKey())
      .addColumn('started_at', 'double precision', (c) => c.notNull())
      .addColumn('last_seen', 'double precision', (c) => c.notNull())
      .execute()
    await db.schema.createIndex('devices_link_instance').on('devices').column('link_instance').execute()
  },
  async down(db: AnyDb) {
    await db.schema.dropIndex('devices_link_instance').execute()
    await db.schema.dropTable('instances').execute()
  },
})
