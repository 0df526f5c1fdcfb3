import { sql } from 'kysely'
import type { AnyDb, MigrationFactory } from './migration-context.js'

/** The figures the fleet query adds up (§16): seconds per state, placed and missed. */
const SUMMED = ['s_productive', 's_standby', 's_engineering', 's_scheduled_down', 's_unscheduled_down', 's_non_scheduled', 'placed', 'missed'] as const

/**
 * Running totals on the hourly rollups (§16 fleet query): each hourly row also holds its
 * machine's totals from its first figures through the end of that hour (`run_<column>`). A
 * window's sums are then the difference of two rows per machine, whatever its length, instead
 * of one row per machine per day or hour. Existing rows are filled with a window function.
 */
export const productionRunningTotals: MigrationFactory = (ctx) => ({
  async up(db: AnyDb) {
    for (const column of SUMMED) {
      const type = column.startsWith('s_') ? 'double precision' : 'bigint'
      await db.schema
        .alterTable('production_hourly')
        .addColumn(`run_${column}`, type, (c) => c.notNull().defaultTo(0))
        .execute()
    }
    const sums = sql.join(SUMMED.map((c) => sql`sum(${sql.ref(c)}) over running as ${sql.ref(`run_${c}`)}`))
    const sets = sql.join(SUMMED.map((c) => sql`${sql.ref(`run_${c}`)} = r.${sql.ref(`run_${c}`)}`))
    await sql`
      update production_hourly set ${sets}
      from (select device_id, hour_start, ${sums} from production_hourly window running as (partition by device_id order by hour_start)) as r
      where production_hourly.device_id = r.device_id and production_hourly.hour_start = r.hour_start`.execute(db)
    // 0017's indexes by time served the fleet query's scans of every machine's rows; it now
    // probes each machine's primary key instead, and the ingest side no longer pays for them.
    await db.schema.dropIndex('production_hourly_hour_start').execute()
    await db.schema.dropIndex('production_daily_day_start').execute()
    // PostgreSQL reads the totals at an hour for every machine that has a row just before it
    // from adjacent entries of this index, without touching the table (an index-only scan);
    // probing 10,000 primary keys instead took 0.1–0.25 s (npm run bench -- production queries).
    if (ctx.dialect === 'postgres') await sql`create index production_hourly_running on production_hourly (hour_start, device_id) include (${sql.raw(SUMMED.map((c) => `run_${c}`).join(', '))})`.execute(db)
  },
  async down(db: AnyDb) {
    if (ctx.dialect === 'postgres') await db.schema.dropIndex('production_hourly_running').execute()
    await db.schema.createIndex('production_hourly_hour_start').on('production_hourly').column('hour_start').execute()
    await db.schema.createIndex('production_daily_day_start').on('production_daily').column('day_start').execute()
    for (const column of SUMMED) await db.schema.alterTable('production_hourly').dropColumn(`run_${column}`).execute()
  },
})
