import type { AnyDb, MigrationFactory } from './migration-context.js'

/**
 * Firmware rollouts (contract §14): one row per rollout, one per targeted machine. At most one
 * rollout is running or paused: `active_slot` is 1 for it and NULL otherwise, under a unique index
 * (NULLs are distinct on both engines), so two creations at once cannot both win.
 */
export const rollouts: MigrationFactory = () => ({
  async up(db: AnyDb) {
    await db.schema
      .createTable('rollouts')
      .addColumn('rollout_id', 'varchar(64)', (c) => c.primaryKey())
      .addColumn('release_id', 'varchar(64)', (c) => c.notNull())
      .addColumn('display_version', 'varchar(64)', (c) => c.notNull())
      .addColumn('state', 'varchar(16)', (c) => c.notNull())
      .addColumn('active_slot', 'integer')
      .addColumn('stage', 'integer', (c) => c.notNull())
      .addColumn('stages', 'text', (c) => c.notNull())
      .addColumn('max_failure_ratio', 'double precision', (c) => c.notNull())
      .addColumn('soak_seconds', 'double precision', (c) => c.notNull())
      .addColumn('targeted', 'integer', (c) => c.notNull())
      .addColumn('check_failures_from', 'integer', (c) => c.notNull())
      .addColumn('stage_opened_at', 'double precision', (c) => c.notNull())
      .addColumn('stage_ended_at', 'double precision')
      .addColumn('counts', 'text', (c) => c.notNull())
      .addColumn('counts_at', 'double precision', (c) => c.notNull())
      .addColumn('created_at', 'double precision', (c) => c.notNull())
      .addColumn('created_by', 'varchar(128)', (c) => c.notNull())
      .addColumn('updated_at', 'double precision', (c) => c.notNull())
      .execute()
    await db.schema.createIndex('rollouts_one_active').on('rollouts').column('active_slot').unique().execute()
    await db.schema.createIndex('rollouts_created').on('rollouts').columns(['created_at', 'rollout_id']).execute()
    await db.schema
      .createTable('rollout_devices')
      .addColumn('rollout_id', 'varchar(64)', (c) => c.notNull().references('rollouts.rollout_id').onDelete('cascade'))
      .addColumn('device_id', 'varchar(64)', (c) => c.notNull())
      .addColumn('position', 'integer', (c) => c.notNull())
      .addColumn('stage', 'integer', (c) => c.notNull())
      .addColumn('state', 'varchar(16)', (c) => c.notNull())
      .addColumn('progress', 'double precision')
      .addColumn('error', 'text')
      .addColumn('offered_at', 'double precision')
      .addColumn('last_report_at', 'double precision')
      .addColumn('next_try_at', 'double precision', (c) => c.notNull())
      .addColumn('updated_at', 'double precision', (c) => c.notNull())
      .addPrimaryKeyConstraint('rollout_devices_pk', ['rollout_id', 'device_id'])
      .execute()
    await db.schema.createIndex('rollout_devices_order').on('rollout_devices').columns(['rollout_id', 'position']).unique().execute()
    await db.schema.createIndex('rollout_devices_due').on('rollout_devices').columns(['rollout_id', 'state', 'next_try_at']).execute()
  },
  async down(db: AnyDb) {
    await db.schema.dropTable('rollout_devices').execute()
    await db.schema.dropTable('rollouts').execute()
  },
})
