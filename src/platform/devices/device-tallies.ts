import type { Db, Tx } from '../../storage/storage.js'

/**
 * Rows the device count is kept in: a registration or deletion adds to one chosen at random, so
 * concurrent ones (several instances) seldom wait on one another's row until their commit.
 */
const SHARDS = 4

/**
 * Counts `delta` devices created (1) or deleted (-1), inside the transaction that inserted or
 * deleted the row, after its other writes: the tally commits (or rolls back) with the row.
 */
export async function tallyDevices(tx: Db | Tx, delta: 1 | -1): Promise<void> {
  const shard = Math.floor(Math.random() * SHARDS)
  await tx
    .insertInto('platform_device_tallies')
    .values({ shard, n: delta })
    .onConflict((oc) => oc.column('shard').doUpdateSet((eb) => ({ n: eb('platform_device_tallies.n', '+', eb.ref('excluded.n')) })))
    .execute()
}

/** Every platform device: the sum of the tallies. */
export async function totalDevices(db: Db | Tx): Promise<number> {
  const row = await db.selectFrom('platform_device_tallies').select((eb) => eb.fn.sum<number>('n').as('n')).executeTakeFirst()
  return Number(row?.n ?? 0)
}

/** Counts the devices again from the rows (after rows were written past the store, as the data benchmark loads them). */
export async function recountDevices(db: Db): Promise<void> {
  await db.transaction().execute(async (tx) => {
    await tx.deleteFrom('platform_device_tallies').execute()
    await tx
      .insertInto('platform_device_tallies')
      .columns(['shard', 'n'])
      .expression((eb) => eb.selectFrom('platform_devices').select((e) => [e.lit(0).as('shard'), e.fn.countAll().as('n')]))
      .execute()
  })
}
