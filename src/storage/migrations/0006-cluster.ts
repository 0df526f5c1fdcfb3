import type { AnyDb, MigrationFactory } from './migration-context.js'

/**
 * Several instances: the fencing generation of each device's link (every claim bumps it; the
 * highest one holds the link), and rate-limit hits every instance counts together.
 */
export const cluster: MigrationFactory = (ctx) => ({
  async up(db: AnyDb) {
    await db.schema.alterTable('devices').addColumn('link_generation', 'bigint', (c) => c.notNull().defaultTo(0)).execute()
    await db.schema
      .createTable('rate_hits')
      .addColumn('id', ctx.autoIdType, ctx.autoId({ mayReuse: true }))
      .addColumn('key', 'varchar(512)', (c) => c.notNull())
      .addColumn('at', 'bigint', (c) => c.notNull())
      .execute()
    await db.schema.createIndex('rate_hits_key_at').on('rate_hits').columns(['key', 'at']).execute()
    await db.schema.createIndex('rate_hits_at').on('rate_hits').column('at').execute()
  },
  async down(db: AnyDb) {
    await db.schema.dropTable('rate_hits').execute()
    await db.schema.alterTable('devices').dropColumn('link_generation').execute()
  },
})
