import type { AnyDb, MigrationFactory } from './migration-context.js'

/**
 * Telemetry points lose their id on PostgreSQL, where it was a sequence and a unique index
 * written with every point (40 % of the cost of an insert there) while no query names a point:
 * pruning names them by `ctid` (`Storage.rowId`). On SQLite the id is the table's rowid, free,
 * and a primary key cannot be dropped: it stays, unused.
 */
export const keylessPoints: MigrationFactory = (ctx) => ({
  async up(db: AnyDb) {
    if (ctx.dialect === 'postgres') await db.schema.alterTable('platform_telemetry').dropColumn('id').execute()
  },
  async down(db: AnyDb) {
    if (ctx.dialect === 'postgres') await db.schema.alterTable('platform_telemetry').addColumn('id', 'bigserial', (c) => c.primaryKey()).execute()
  },
})
