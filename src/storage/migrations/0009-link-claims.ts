import type { AnyDb, MigrationFactory } from './migration-context.js'

/**
 * When each device's link was last claimed, indexed: the fence check reads only the claims made
 * since its last pass, so its cost follows link churn, not the number of idle links.
 */
export const linkClaims: MigrationFactory = () => ({
  async up(db: AnyDb) {
    await db.schema.alterTable('devices').addColumn('link_claimed_at', 'double precision').execute()
    await db.schema.createIndex('devices_link_claimed_at').on('devices').column('link_claimed_at').execute()
  },
  async down(db: AnyDb) {
    await db.schema.dropIndex('devices_link_claimed_at').execute()
    await db.schema.alterTable('devices').dropColumn('link_claimed_at').execute()
  },
})
