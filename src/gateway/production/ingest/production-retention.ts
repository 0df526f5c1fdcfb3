import { sql } from 'kysely'
import { pruneUntilShort, type Pacer } from '../../../storage/prune-pacer.js'
import type { Storage } from '../../../storage/storage.js'

const DAY_S = 86_400
/** Hourly and daily figures and jobs are kept this long (§16: at least 2 years). */
export const PRODUCTION_ROLLUP_RETENTION_DAYS = 730
/** Machines per pass of statements: the deletes walk the (device_id, …) indexes of these machines. */
const DEVICE_PAGE = 500
const SECONDS = ['s_productive', 's_standby', 's_engineering', 's_scheduled_down', 's_unscheduled_down', 's_non_scheduled'] as const
const ZEROED_FIGURES = { ...Object.fromEntries(SECONDS.map((c) => [c, 0])), placed: 0, missed: 0, jobs_completed: 0, faults: '{}', feeders: '[]', nozzles: '[]' }

export interface ProductionPruneOptions {
  /** Raw events and state rows older than this are deleted (PRODUCTION_RETENTION_DAYS). */
  rawDays: number
  /** Rows per DELETE, and the rest between two (see Pacer). */
  pacer: Pacer
}

/**
 * Prunes production data past its retention (§16): raw events and state rows after
 * `PRODUCTION_RETENTION_DAYS`, hourly and daily rows and jobs after 2 years (each machine's newest
 * hourly row before then is kept, zeroed, for its running totals). Each machine keeps
 * its last state row before the cut-off (and so always its newest one): the state it was in
 * then, which a late event (up to 30 days, inside the retention) splits. Walks the machines a
 * page at a time, deleting along their (device_id, ts) indexes in small batches. Answers the
 * rows deleted.
 */
/** What the retention job calls: prunes as of `nowMs`, batches sized and paced by `pacer`. */
export type ProductionPruner = (nowMs: number, pacer: Pacer) => Promise<number>

export async function pruneProduction(storage: Storage, nowMs: number, options: ProductionPruneOptions): Promise<number> {
  const { db, rowId } = storage
  const now = nowMs / 1000
  const rawCutoff = now - options.rawDays * DAY_S
  const rollupCutoff = now - PRODUCTION_ROLLUP_RETENTION_DAYS * DAY_S
  const id = sql.ref<string>(rowId)
  let total = 0
  let after: string | undefined
  for (;;) {
    const page = (
      await db
        .selectFrom('devices')
        .select('device_id')
        .$if(after !== undefined, (q) => q.where('device_id', '>', after!))
        .orderBy('device_id')
        .limit(DEVICE_PAGE)
        .execute()
    ).map((r) => r.device_id)
    if (page.length === 0) return total
    after = page.at(-1)
    const deletes = [
      (batch: number) =>
        db
          .deleteFrom('production_events')
          .where(id, 'in', db.selectFrom('production_events').select(id.as('row_id')).where('device_id', 'in', page).where('ts', '<', rawCutoff).limit(batch))
          .executeTakeFirst(),
      (batch: number) =>
        db
          .deleteFrom('production_states')
          .where(
            id,
            'in',
            db
              .selectFrom('production_states as s')
              .select(sql.ref<string>(`s.${rowId}`).as('row_id'))
              .where('s.device_id', 'in', page)
              .where('s.ts', '<', rawCutoff)
              .where(({ exists, selectFrom }) =>
                exists(
                  selectFrom('production_states as later')
                    .select('later.ts')
                    .whereRef('later.device_id', '=', 's.device_id')
                    .whereRef('later.ts', '>', 's.ts')
                    .where('later.ts', '<', rawCutoff),
                ),
              )
              .limit(batch),
          )
          .executeTakeFirst(),
      // The newest hourly row before the cut-off stays, its own figures zeroed: its running
      // totals are the base the later rows' differences start from (0018).
      (batch: number) =>
        db
          .deleteFrom('production_hourly')
          .where(
            id,
            'in',
            db
              .selectFrom('production_hourly as h')
              .select(sql.ref<string>(`h.${rowId}`).as('row_id'))
              .where('h.device_id', 'in', page)
              .where('h.hour_start', '<', rollupCutoff)
              .where(({ exists, selectFrom }) =>
                exists(
                  selectFrom('production_hourly as later')
                    .select('later.hour_start')
                    .whereRef('later.device_id', '=', 'h.device_id')
                    .whereRef('later.hour_start', '>', 'h.hour_start')
                    .where('later.hour_start', '<', rollupCutoff),
                ),
              )
              .limit(batch),
          )
          .executeTakeFirst(),
      async (_batch: number) => {
        await db
          .updateTable('production_hourly')
          .set({ ...ZEROED_FIGURES })
          .where('device_id', 'in', page)
          .where('hour_start', '<', rollupCutoff)
          .where((eb) => eb.or([eb('placed', '<>', 0), eb('missed', '<>', 0), eb('jobs_completed', '<>', 0), eb('faults', '<>', '{}'), eb('feeders', '<>', '[]'), eb('nozzles', '<>', '[]'), ...SECONDS.map((c) => eb(c, '<>', 0))]))
          .execute()
        return { numDeletedRows: 0n }
      },
      (batch: number) =>
        db
          .deleteFrom('production_daily')
          .where(id, 'in', db.selectFrom('production_daily').select(id.as('row_id')).where('device_id', 'in', page).where('day_start', '<', rollupCutoff).limit(batch))
          .executeTakeFirst(),
      (batch: number) =>
        db
          .deleteFrom('production_jobs')
          .where(
            id,
            'in',
            db
              .selectFrom('production_jobs')
              .select(id.as('row_id'))
              .where('device_id', 'in', page)
              .where((eb) => eb(eb.fn.coalesce('ended_at', 'started_at'), '<', rollupCutoff))
              .limit(batch),
          )
          .executeTakeFirst(),
    ]
    for (const remove of deletes) {
      const { deleted, stopped } = await pruneUntilShort(options.pacer, async (size) => Number((await remove(size)).numDeletedRows))
      total += deleted
      if (stopped) return total
    }
  }
}
