import type { AnyDb, MigrationFactory } from './migration-context.js'

/**
 * Rollouts that watch production (§16): the KPI gate given at creation, what the gate of the
 * ended stage is doing, why a rollout is paused, and when each machine reported `installed` (its
 * placements from then on are compared with those before its offer; the gate reads
 * `production_events` by (device_id, kind, ts), indexed by 0016). And the rollups by time, for the
 * fleet query.
 */
export const rolloutKpiGate: MigrationFactory = () => ({
  async up(db: AnyDb) {
    await db.schema.alterTable('rollouts').addColumn('kpi_gate', 'text').execute()
    await db.schema.alterTable('rollouts').addColumn('gate_state', 'varchar(16)').execute()
    await db.schema.alterTable('rollouts').addColumn('pause_reason', 'varchar(32)').execute()
    await db.schema.alterTable('rollout_devices').addColumn('installed_at', 'double precision').execute()
    // The fleet query (§16) reads every machine's rows of a time range: by time, not by machine
    // (the primary keys lead with device_id). Without these PostgreSQL scanned the whole hourly
    // table for the partial days of a 90-day window (npm run bench -- production queries).
    await db.schema.createIndex('production_hourly_hour_start').on('production_hourly').column('hour_start').execute()
    await db.schema.createIndex('production_daily_day_start').on('production_daily').column('day_start').execute()
  },
  async down(db: AnyDb) {
    await db.schema.dropIndex('production_daily_day_start').execute()
    await db.schema.dropIndex('production_hourly_hour_start').execute()
    await db.schema.alterTable('rollout_devices').dropColumn('installed_at').execute()
    for (const column of ['pause_reason', 'gate_state', 'kpi_gate']) await db.schema.alterTable('rollouts').dropColumn(column).execute()
  },
})
