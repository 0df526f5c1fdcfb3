import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Storage } from '../../src/storage/storage.js'
import { DIALECTS, openTestStorage } from '../helpers/dialects.js'

const valueOf = async (storage: Storage, k: number) => (await sql<{ v: number }>`select v from bt where k = ${k}`.execute(storage.db)).rows[0]?.v

/** `Storage.bounded`: what a claim relies on (a write its caller gave up on never commits). */
describe.each(DIALECTS)('a bounded transaction on %s', (dialect) => {
  let storage: Storage & { cleanup(): Promise<void> }
  beforeAll(async () => {
    storage = await openTestStorage(dialect)
    await sql`create table bt (k integer primary key, v integer not null)`.execute(storage.db)
  })
  afterAll(() => storage.cleanup())

  it('commits its writes and returns what its function returned', async () => {
    const returned = await storage.bounded(5000, async (trx) => {
      await sql`insert into bt (k, v) values (1, 10), (2, 20)`.execute(trx)
      return (await sql<{ n: number }>`select count(*) as n from bt`.execute(trx)).rows[0]!.n
    })
    expect(Number(returned)).toBe(2)
    expect(await valueOf(storage, 1)).toBe(10)
  })

  it('writes nothing when its function fails after a write', async () => {
    await expect(
      storage.bounded(5000, async (trx) => {
        await sql`insert into bt (k, v) values (3, 30)`.execute(trx)
        throw new Error('given up')
      }),
    ).rejects.toThrow('given up')
    expect(await valueOf(storage, 3)).toBeUndefined()
  })
})

describe.runIf(DIALECTS.includes('postgres'))('a bounded transaction on postgres: the time-out', () => {
  let storage: Storage & { cleanup(): Promise<void> }
  beforeAll(async () => {
    storage = await openTestStorage('postgres')
    await sql`create table bt (k integer primary key, v integer not null)`.execute(storage.db)
  })
  afterAll(() => storage.cleanup())

  it('cancels a statement past its time-out, writes nothing, and leaves no time-out on the pooled connections', async () => {
    const started = performance.now()
    await expect(
      storage.bounded(100, async (trx) => {
        await sql`insert into bt (k, v) values (4, 40)`.execute(trx)
        await sql`select pg_sleep(5)`.execute(trx)
      }),
    ).rejects.toThrow(/statement timeout/)
    expect(performance.now() - started).toBeLessThan(4000)
    expect(await valueOf(storage, 4)).toBeUndefined()
    // Every connection of the pool at once (each held until all ten have read): none kept the 100 ms.
    let release!: () => void
    const allRead = new Promise<void>((resolve) => (release = resolve))
    const reads: string[] = []
    await Promise.all(
      Array.from({ length: 10 }, () =>
        storage.db.connection().execute(async (conn) => {
          reads.push((await sql<{ t: string }>`select current_setting('statement_timeout') as t`.execute(conn)).rows[0]!.t)
          if (reads.length === 10) release()
          await allRead
        }),
      ),
    )
    expect(reads).toEqual(Array(10).fill('0'))
  })

  it('refuses to commit when a failed statement left the transaction aborted', async () => {
    await expect(
      storage.bounded(5000, async (trx) => {
        await sql`insert into bt (k, v) values (5, 50)`.execute(trx)
        await sql`insert into bt (k, v) values (5, 51)`.execute(trx).catch(() => undefined)
      }),
    ).rejects.toThrow(/rolled back/)
    expect(await valueOf(storage, 5)).toBeUndefined()
  })
})
