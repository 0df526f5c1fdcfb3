import { sql } from 'kysely'
import type { AnyDb, MigrationFactory } from './migration-context.js'

export const firmware: MigrationFactory = (ctx) => ({
  async up(db: AnyDb) {
    await db.schema
      .createTable('firmware_releases')
      .addColumn('release_id', 'varchar(64)', (c) => c.primaryKey())
      .addColumn('image_version', 'bigint', (c) => c.notNull())
      .addColumn('display_version', 'varchar(64)', (c) => c.notNull())
      .addColumn('state', 'varchar(16)', (c) => c.notNull())
      .addColumn('size', 'bigint', (c) => c.notNull())
      .addColumn('sha256', 'varchar(64)', (c) => c.notNull())
      .addColumn('crc32', 'varchar(8)', (c) => c.notNull())
      .addColumn('hw_version', 'bigint', (c) => c.notNull())
      .addColumn('manifest', 'text', (c) => c.notNull())
      .addColumn('image', ctx.blobType, (c) => c.notNull())
      .addColumn('download_count', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'double precision', (c) => c.notNull())
      .addColumn('created_by', 'varchar(128)', (c) => c.notNull())
      .addColumn('activated_at', 'double precision')
      .execute()
    await db.schema.createIndex('firmware_releases_created').on('firmware_releases').columns(['created_at', 'release_id']).execute()
    // At most one active release, whatever two admins do at once.
    await db.schema
      .createIndex('firmware_releases_one_active')
      .on('firmware_releases')
      .column('state')
      .unique()
      .where(sql.ref('state'), '=', 'active')
      .execute()
  },
})
