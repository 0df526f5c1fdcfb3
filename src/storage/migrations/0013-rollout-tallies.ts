import { sql } from 'kysely'
import type { AnyDb, MigrationFactory } from './migration-context.js'

const MACHINE_STATES = ['pending', 'waiting', 'offered', 'downloading', 'installing', 'installed', 'failed']

/**
 * Machines per (rollout, stage, state), kept by every transition in its own transaction: every
 * instance reads a rollout's counts every pass, and a GROUP BY over 100,000 machine rows each
 * time is what this replaces. A row per state of every stage that has machines, created with the
 * rollout, so a transition only ever updates rows.
 */
export const rolloutTallies: MigrationFactory = () => ({
  async up(db: AnyDb) {
    await db.schema
      .createTable('rollout_tallies')
      .addColumn('rollout_id', 'varchar(64)', (c) => c.notNull())
      .addColumn('stage', 'integer', (c) => c.notNull())
      .addColumn('state', 'varchar(16)', (c) => c.notNull())
      .addColumn('n', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('rollout_tallies_pk', ['rollout_id', 'stage', 'state'])
      .execute()
    const states = sql.join(MACHINE_STATES.map((state) => sql`select ${state} as state`), sql` union all `)
    await sql`
      insert into rollout_tallies (rollout_id, stage, state, n)
      select d.rollout_id, d.stage, s.state, sum(case when d.state = s.state then 1 else 0 end)
      from rollout_devices d cross join (${states}) s
      group by d.rollout_id, d.stage, s.state`.execute(db)
  },
  async down(db: AnyDb) {
    await db.schema.dropTable('rollout_tallies').execute()
  },
})
