import type { AnyDb, MigrationFactory } from './migration-context.js'

/**
 * Rollouts that watch production (§16): the KPI gate given at creation, what the gate of the
 * ended stage is doing, why a rollout is paused, and when each machine reported `installed` (its
 * placements from then on are compared with those before its offer). An index on
 * `production_states` by (device_id, ts) already exists; the gate reads `production_events` by
 * (device_id, kind, ts), also indexed.
 */
export const rolloutKpiGate: MigrationFactory = () => ({
  async up(db: AnyDb) {
    await db.schema.alterTable('rollouts').addColumn('kpi_gate', 'text').execute()
    await db.schema.alterTable('rollouts').addColumn('gate_state', 'varchar(16)').execute()
    await db.schema.alterTable('rollouts').addColumn('pause_reason', 'varchar(32)').execute()
    await db.schema.alterTable('rollout_devices').addColumn('installed_at', 'double precision').execute()
  },
  async down(db: AnyDb) {
    await db.schema.alterTable('rollout_devices').dropColumn('installed_at').execute()
    for (const column of ['pause_reason', 'gate_state', 'kpi_gate']) await db.schema.alterTable('rollouts').dropColumn(column).execute()
  },
})
