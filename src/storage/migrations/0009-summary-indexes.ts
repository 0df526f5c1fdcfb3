import type { AnyDb, MigrationFactory } from './migration-context.js'

/**
 * The platform summary counts online devices by their last heartbeat: an index on it makes
 * that a range count of the online devices, not a scan of every device.
 */
export const summaryIndexes: MigrationFactory = () => ({
  async up(db: AnyDb) {
    await db.schema.createIndex('platform_devices_last_online').ifNotExists().on('platform_devices').column('last_online_at').execute()
  },
  async down(db: AnyDb) {
    await db.schema.dropIndex('platform_devices_last_online').ifExists().execute()
  },
})
