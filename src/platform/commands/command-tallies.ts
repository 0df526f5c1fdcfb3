import type { Db, Tx } from '../../storage/storage.js'
import type { CommandStatus } from './command-record.js'

/** Finished states: their counts grow with history, so they are kept as rows. Queued ones are few and counted live. */
export const TALLIED_STATUSES = ['done', 'failed', 'expired'] as const satisfies readonly CommandStatus[]
export type TalliedStatus = (typeof TALLIED_STATUSES)[number]

/** Rows per state: concurrent acks (each moves one command to done or failed) seldom wait on the same row. */
const SHARDS = 8

const isTallied = (status: string): status is TalliedStatus => (TALLIED_STATUSES as readonly string[]).includes(status)

/** A command that entered (`+1`) or left (`-1`) a state. */
export interface TallyChange {
  id: number
  status: string
  delta: 1 | -1
}

export const entered = (row: { id: number; status: string }): TallyChange => ({ id: row.id, status: row.status, delta: 1 })
export const left = (row: { id: number; status: string }): TallyChange => ({ id: row.id, status: row.status, delta: -1 })

/**
 * Applies the changes of a transaction to the tallies, inside that transaction and after its
 * other writes to commands. Rows are updated in (status, shard) order, so concurrent
 * transactions take the tally rows' locks in one order and never deadlock on them.
 */
export async function adjustTallies(tx: Tx, changes: readonly TallyChange[]): Promise<void> {
  const deltas = new Map<string, { status: TalliedStatus; shard: number; n: number }>()
  for (const { id, status, delta } of changes) {
    if (!isTallied(status)) continue
    const shard = id % SHARDS
    const key = `${status}/${shard}`
    const d = deltas.get(key) ?? { status, shard, n: 0 }
    d.n += delta
    deltas.set(key, d)
  }
  const rows = [...deltas.values()].filter((d) => d.n !== 0).sort((a, b) => (a.status < b.status ? -1 : a.status > b.status ? 1 : a.shard - b.shard))
  for (const row of rows) {
    await tx
      .insertInto('platform_command_tallies')
      .values(row)
      .onConflict((oc) => oc.columns(['status', 'shard']).doUpdateSet((eb) => ({ n: eb('platform_command_tallies.n', '+', eb.ref('excluded.n')) })))
      .execute()
  }
}

/** Commands in each finished state. */
export async function talliedCounts(db: Db): Promise<Record<TalliedStatus, number>> {
  const rows = await db
    .selectFrom('platform_command_tallies')
    .select((eb) => ['status', eb.fn.sum<number>('n').as('n')])
    .groupBy('status')
    .execute()
  const counts = Object.fromEntries(TALLIED_STATUSES.map((s) => [s, 0])) as Record<TalliedStatus, number>
  for (const row of rows) if (isTallied(row.status)) counts[row.status] = Number(row.n)
  return counts
}
