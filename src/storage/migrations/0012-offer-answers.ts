import { sql } from 'kysely'
import type { AnyDb, MigrationFactory } from './migration-context.js'

/**
 * A rollout machine's offer is "answered" by a column of its own, not by the sentinel
 * `last_report_at = offered_at` (both are written by one statement at the offer, the first on
 * every report too). Offers answered before this migration keep counting as answered.
 */
export const offerAnswers: MigrationFactory = () => ({
  async up(db: AnyDb) {
    await db.schema.alterTable('rollout_devices').addColumn('answered_at', 'double precision').execute()
    await sql`update rollout_devices set answered_at = last_report_at where offered_at is not null and last_report_at <> offered_at`.execute(db)
  },
  async down(db: AnyDb) {
    await db.schema.alterTable('rollout_devices').dropColumn('answered_at').execute()
  },
})
