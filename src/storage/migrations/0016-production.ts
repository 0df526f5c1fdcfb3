import { sql, type ColumnDefinitionBuilder } from 'kysely'
import type { AnyDb, MigrationFactory } from './migration-context.js'

/** The six SEMI E10 state columns of a rollup row, in seconds of closed state intervals. */
const STATE_SECONDS = ['s_productive', 's_standby', 's_engineering', 's_scheduled_down', 's_unscheduled_down', 's_non_scheduled'] as const

/**
 * Production reporting (§16): raw events kept exactly once by (device_id, event_id), the state
 * sequence by `ts`, each machine's current state, rollups per hour and per UTC day maintained in
 * the transaction that stores the raw events, and jobs. Times are seconds since epoch (double);
 * `hour_start` / `day_start` are whole seconds (UTC). Rows go with their machine.
 */
export const production: MigrationFactory = (ctx) => ({
  async up(db: AnyDb) {
    const bytes = (n: number) => (ctx.dialect === 'postgres' ? sql.raw(`varchar(${n}) collate "C"`) : sql.raw(`varchar(${n})`))
    const deviceId = (c: ColumnDefinitionBuilder) => c.notNull().references('devices.device_id').onDelete('cascade')

    await db.schema.alterTable('devices').addColumn('rated_cph', 'integer').execute()

    await db.schema
      .createTable('production_events')
      .addColumn('device_id', bytes(64), deviceId)
      .addColumn('event_id', bytes(64), (c) => c.notNull())
      .addColumn('ts', 'double precision', (c) => c.notNull())
      .addColumn('kind', 'varchar(16)', (c) => c.notNull())
      .addColumn('state', 'varchar(20)')
      .addColumn('reason', 'varchar(64)')
      .addColumn('job_id', bytes(64))
      .addColumn('placed', 'integer')
      .addColumn('missed', 'integer')
      .addColumn('body', 'text', (c) => c.notNull())
      .addColumn('received_at', 'double precision', (c) => c.notNull())
      .addPrimaryKeyConstraint('production_events_pk', ['device_id', 'event_id'])
      .execute()
    await db.schema.createIndex('production_events_device_ts').on('production_events').columns(['device_id', 'ts']).execute()
    await db.schema.createIndex('production_events_device_kind_ts').on('production_events').columns(['device_id', 'kind', 'ts']).execute()

    await db.schema
      .createTable('production_states')
      .addColumn('device_id', bytes(64), deviceId)
      .addColumn('ts', 'double precision', (c) => c.notNull())
      .addColumn('state', 'varchar(20)', (c) => c.notNull())
      .addColumn('reason', 'varchar(64)')
      .addColumn('event_id', bytes(64))
      .execute()
    await db.schema.createIndex('production_states_device_ts').on('production_states').columns(['device_id', 'ts', 'event_id']).execute()

    for (const [table, start] of [
      ['production_hourly', 'hour_start'],
      ['production_daily', 'day_start'],
    ] as const) {
      let create = db.schema
        .createTable(table)
        .addColumn('device_id', bytes(64), deviceId)
        .addColumn(start, 'integer', (c) => c.notNull())
      for (const column of STATE_SECONDS) create = create.addColumn(column, 'double precision', (c) => c.notNull().defaultTo(0))
      await create
        .addColumn('placed', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('missed', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('jobs_completed', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('faults', 'text', (c) => c.notNull().defaultTo('{}'))
        .addColumn('feeders', 'text', (c) => c.notNull().defaultTo('[]'))
        .addColumn('nozzles', 'text', (c) => c.notNull().defaultTo('[]'))
        .addPrimaryKeyConstraint(`${table}_pk`, ['device_id', start])
        .execute()
    }

    await db.schema
      .createTable('production_current')
      .addColumn('device_id', bytes(64), (c) => c.primaryKey().references('devices.device_id').onDelete('cascade'))
      .addColumn('state', 'varchar(20)', (c) => c.notNull())
      .addColumn('reason', 'varchar(64)')
      .addColumn('since', 'double precision', (c) => c.notNull())
      .execute()

    await db.schema
      .createTable('production_jobs')
      .addColumn('device_id', bytes(64), deviceId)
      .addColumn('job_id', bytes(64), (c) => c.notNull())
      .addColumn('order_id', 'text')
      .addColumn('program', 'text')
      .addColumn('started_at', 'double precision')
      .addColumn('ended_at', 'double precision')
      .addColumn('result', 'varchar(16)')
      .addColumn('boards_planned', 'integer')
      .addColumn('boards_done', 'integer')
      .addColumn('placed', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('missed', 'bigint', (c) => c.notNull().defaultTo(0))
      .addPrimaryKeyConstraint('production_jobs_pk', ['device_id', 'job_id'])
      .execute()
    await db.schema.createIndex('production_jobs_device_started').on('production_jobs').columns(['device_id', 'started_at']).execute()
  },
  async down(db: AnyDb) {
    for (const table of ['production_jobs', 'production_current', 'production_daily', 'production_hourly', 'production_states', 'production_events']) {
      await db.schema.dropTable(table).execute()
    }
    await db.schema.alterTable('devices').dropColumn('rated_cph').execute()
  },
})
