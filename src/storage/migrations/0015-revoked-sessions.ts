import type { AnyDb, MigrationFactory } from './migration-context.js'

/**
 * Sessions ended by `POST /auth/logout` (contract §17): every instance refuses their tokens. A row
 * is kept until no token of its session can be valid any more (`expires_at`, epoch milliseconds),
 * then the retention job deletes it.
 */
export const revokedSessions: MigrationFactory = () => ({
  async up(db: AnyDb) {
    await db.schema
      .createTable('revoked_sessions')
      .addColumn('sid', 'varchar(64)', (c) => c.primaryKey())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute()
    await db.schema.createIndex('revoked_sessions_expires_at').on('revoked_sessions').column('expires_at').execute()
  },
  async down(db: AnyDb) {
    await db.schema.dropTable('revoked_sessions').execute()
  },
})
