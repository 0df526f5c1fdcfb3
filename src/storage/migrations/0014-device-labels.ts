import { sql } from 'kysely'
import type { AnyDb, MigrationFactory } from './migration-context.js'

/**
 * Labels of gateway machines (§15), a row per label: a selector's requirements become indexed
 * EXISTS probes on both engines. Keys and values compare in byte order on both engines, as ids do.
 * A rollout created from a selector records it.
 */
export const deviceLabels: MigrationFactory = (ctx) => ({
  async up(db: AnyDb) {
    const bytes = (n: number) => (ctx.dialect === 'postgres' ? sql.raw(`varchar(${n}) collate "C"`) : sql.raw(`varchar(${n})`))
    await db.schema
      .createTable('device_labels')
      .addColumn('device_id', bytes(64), (c) => c.notNull().references('devices.device_id').onDelete('cascade'))
      .addColumn('key', bytes(63), (c) => c.notNull())
      .addColumn('value', bytes(63), (c) => c.notNull())
      .addPrimaryKeyConstraint('device_labels_pk', ['device_id', 'key'])
      .execute()
    await db.schema.createIndex('device_labels_key_value').on('device_labels').columns(['key', 'value', 'device_id']).execute()
    await db.schema.alterTable('rollouts').addColumn('selector', 'text').execute()
  },
  async down(db: AnyDb) {
    await db.schema.alterTable('rollouts').dropColumn('selector').execute()
    await db.schema.dropTable('device_labels').execute()
  },
})
