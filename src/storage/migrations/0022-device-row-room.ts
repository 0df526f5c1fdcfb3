import { sql } from 'kysely'
import type { AnyDb, MigrationFactory } from './migration-context.js'

/**
 * PostgreSQL: pages of `devices` keep 30 % free, so that the heartbeat writes (last heartbeat and
 * status, no indexed column) can stay on their page as HOT updates instead of writing a new
 * entry into each of the table's indexes. With full pages 6 % of the device updates of the
 * `links` bench were HOT, and 4 % of five heartbeat rounds over 400 devices (72 % with the room,
 * test/storage/device-row-room-migration.test.ts); the heartbeats of a 100,000-machine fleet are
 * 5,000 row updates a second. Applies to pages written from now on (a table written before keeps
 * its full pages until rewritten, e.g. by `VACUUM FULL devices`); SQLite has no such setting.
 */
export const deviceRowRoom: MigrationFactory = (ctx) => ({
  async up(db: AnyDb) {
    if (ctx.dialect === 'postgres') await sql`alter table devices set (fillfactor = 70)`.execute(db)
  },
  async down(db: AnyDb) {
    if (ctx.dialect === 'postgres') await sql`alter table devices reset (fillfactor)`.execute(db)
  },
})
