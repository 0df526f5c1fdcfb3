import { sql } from 'kysely'
import type { Db, Tx } from './storage.js'
import type { TextByShape } from './text-by-shape.js'

/**
 * What the summary counts over its last 24 h, kept as rows: per kind, per minute (`bucket`, its
 * first millisecond), the rows of that minute. Written in the transaction that writes or deletes
 * the counted rows, so a tally is exactly the rows its minute holds; the summary sums at most
 * 1,440 minutes of them and counts the rows of the minute the window starts in.
 */
export type TallyKind = 'telemetry' | 'device_errors'

export const TALLY_BUCKET_MS = 60_000

/**
 * Rows per minute: each statement adds to one chosen at random, so concurrent writers (several
 * per instance, several instances) seldom wait on one another's row until their commit.
 */
const SHARDS = 4
/** Rows per upsert (four parameters each). */
const CHUNK_ROWS = 1000

export const bucketOf = (ts: number) => Math.floor(ts / TALLY_BUCKET_MS) * TALLY_BUCKET_MS

/**
 * Adds `sign` × one row per time in `times` to the tallies, inside the transaction that wrote
 * (or deleted) those rows. Minutes in ascending order: concurrent transactions take the tally
 * rows' locks in one order and never deadlock on them; call after the transaction's other writes.
 * `texts`: a cache of statement texts of the caller's storage (one dialect), for hot paths.
 */
export async function tally(tx: Db | Tx, kind: TallyKind, times: Iterable<number>, sign: 1 | -1 = 1, texts?: TextByShape): Promise<void> {
  const perBucket = new Map<number, number>()
  // Times come in runs within one minute (a batch's readings): a run is counted, then added once.
  let run = { bucket: 0, end: -Infinity, n: 0 }
  const addRun = () => run.n > 0 && perBucket.set(run.bucket, (perBucket.get(run.bucket) ?? 0) + sign * run.n)
  for (const time of times) {
    const ts = Number(time)
    if (ts >= run.bucket && ts < run.end) {
      run.n++
      continue
    }
    addRun()
    const bucket = bucketOf(ts)
    run = { bucket, end: bucket + TALLY_BUCKET_MS, n: 1 }
  }
  addRun()
  if (perBucket.size === 0) return
  const shard = Math.floor(Math.random() * SHARDS)
  const rows = [...perBucket].sort((a, b) => a[0] - b[0]).map(([bucket, n]) => ({ kind, bucket, shard, n }))
  for (let i = 0; i < rows.length; i += CHUNK_ROWS) {
    const chunk = rows.slice(i, i + CHUNK_ROWS)
    const upsert = () =>
      tx
        .insertInto('platform_window_tallies')
        .values(chunk)
        .onConflict((oc) => oc.columns(['kind', 'bucket', 'shard']).doUpdateSet((eb) => ({ n: eb('platform_window_tallies.n', '+', eb.ref('excluded.n')) })))
    if (!texts) await upsert().execute()
    else await tx.executeQuery(texts.compiled(`tally:${chunk.length}`, chunk.flatMap((r) => [r.kind, r.bucket, r.shard, r.n]), () => upsert().compile()))
  }
}

/**
 * Rows of `kind` with a time at or after `since`: the tallies of the minutes after the one
 * `since` lies in, plus `countRaw(since, end)`, the rows from `since` to the end of its minute.
 */
export async function countSince(db: Db, kind: TallyKind, since: number, countRaw: (from: number, to: number) => Promise<number>): Promise<number> {
  const edgeEnd = bucketOf(since) + TALLY_BUCKET_MS
  const [tallied, edge] = await Promise.all([
    db
      .selectFrom('platform_window_tallies')
      .select((eb) => eb.fn.sum<number>('n').as('n'))
      .where('kind', '=', kind)
      .where('bucket', '>=', edgeEnd)
      .executeTakeFirst(),
    countRaw(since, edgeEnd),
  ])
  return Number(tallied?.n ?? 0) + edge
}

/**
 * Drops the tallies of the minutes that ended by `cutoff`: a retention pass that reached the
 * cutoff deleted their rows (not subtracting them one by one). Until then, they still count the
 * rows of an unfinished pass: in the summary's window only with a retention under a day.
 */
export async function dropTalliesBefore(db: Db, kind: TallyKind, cutoff: number): Promise<void> {
  await db.deleteFrom('platform_window_tallies').where('kind', '=', kind).where('bucket', '<=', cutoff - TALLY_BUCKET_MS).execute()
}

/** Recounts every tally from the rows (after rows were written past the store, as the data benchmark loads them). */
export async function recountTallies(db: Db): Promise<void> {
  await db.transaction().execute(async (tx) => {
    await tx.deleteFrom('platform_window_tallies').execute()
    const bucket = sql<number>`ts / ${sql.lit(TALLY_BUCKET_MS)} * ${sql.lit(TALLY_BUCKET_MS)}`
    await tx
      .insertInto('platform_window_tallies')
      .columns(['kind', 'bucket', 'shard', 'n'])
      .expression((eb) => eb.selectFrom('platform_telemetry').select([sql.lit('telemetry').as('kind'), bucket.as('bucket'), sql.lit(0).as('shard'), eb.fn.countAll().as('n')]).groupBy(bucket))
      .execute()
    await tx
      .insertInto('platform_window_tallies')
      .columns(['kind', 'bucket', 'shard', 'n'])
      .expression((eb) =>
        eb
          .selectFrom('platform_logs')
          .select([sql.lit('device_errors').as('kind'), bucket.as('bucket'), sql.lit(0).as('shard'), eb.fn.countAll().as('n')])
          .where('source', '=', 'device')
          .where('level', '=', 'error')
          .groupBy(bucket),
      )
      .execute()
  })
}
