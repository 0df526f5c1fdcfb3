import { sql } from 'kysely'
import type { Db } from '../../../storage/storage.js'
import { STATE_COLUMNS } from './rollup-deltas.js'

/** The columns of an hourly row that carry running totals (migration 0018)… */
export const SUMMED_COLUMNS = [...Object.values(STATE_COLUMNS), 'placed', 'missed'] as const
/** …and the totals' names. */
export const RUN_COLUMNS = SUMMED_COLUMNS.map((c) => `run_${c}` as const)

/**
 * Recomputes the running totals of every hourly row of `deviceId` (or of every machine) from
 * the rows' own figures: for rows written other than by the ingest side, which keeps them as it
 * writes (test fixtures, the bench's loader). Totals carried over from pruned rows are lost.
 */
export async function recomputeRunningTotals(db: Db, deviceId?: string): Promise<void> {
  const sums = sql.join(SUMMED_COLUMNS.map((c) => sql`sum(${sql.ref(c)}) over running as ${sql.ref(`run_${c}`)}`))
  const sets = sql.join(SUMMED_COLUMNS.map((c) => sql`${sql.ref(`run_${c}`)} = r.${sql.ref(`run_${c}`)}`))
  const only = deviceId === undefined ? sql`` : sql`where device_id = ${deviceId}`
  await sql`
    update production_hourly set ${sets}
    from (select device_id, hour_start, ${sums} from production_hourly ${only} window running as (partition by device_id order by hour_start)) as r
    where production_hourly.device_id = r.device_id and production_hourly.hour_start = r.hour_start`.execute(db)
}
