import { sql, type CompiledQuery } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runIndependentWrites } from '../../src/storage/independent-writes.js'
import type { Storage } from '../../src/storage/storage.js'
import { DIALECTS, openTestStorage } from '../helpers/dialects.js'

describe.each(DIALECTS)('independent writes on %s', (dialect) => {
  let storage: Storage & { cleanup(): Promise<void> }
  beforeAll(async () => {
    storage = await openTestStorage(dialect)
    await sql`create table iw_a (k integer primary key, v integer not null)`.execute(storage.db)
    await sql`create table iw_b (k integer primary key, v integer not null)`.execute(storage.db)
  })
  afterAll(() => storage.cleanup())

  /** An upsert of `rows` (k, v) into `table` that adds v to a stored row. */
  const upsert = (table: 'iw_a' | 'iw_b', rows: [number, number][]): CompiledQuery =>
    sql`insert into ${sql.table(table)} (k, v) values ${sql.join(rows.map(([k, v]) => sql`(${k}, ${v})`))} on conflict (k) do update set v = ${sql.ref(`${table}.v`)} + excluded.v`.compile(storage.db)

  it('each keep their own parameters, in one statement or, past the parameter limit, several', async () => {
    const rows = (from: number, n: number, v: (k: number) => number) => Array.from({ length: n }, (_, i): [number, number] => [from + i, v(from + i)])
    // 10,000 parameters, 10,000, then 25,000 twice: the first two go together, the others (each past 30,000 with the ones before) alone; all together would pass PostgreSQL's 65,535.
    const writes = [upsert('iw_a', rows(0, 5000, (k) => k)), upsert('iw_b', rows(0, 5000, (k) => 2 * k)), upsert('iw_a', rows(5000, 12500, (k) => 3 * k)), upsert('iw_b', rows(5000, 12500, (k) => 4 * k))]
    await storage.db.transaction().execute((trx) => runIndependentWrites(trx, dialect, writes))
    await storage.db.transaction().execute((trx) => runIndependentWrites(trx, dialect, [upsert('iw_a', [[1, 10]]), upsert('iw_b', [[1, 20]])]))
    const a = await sql<{ k: number; v: number }>`select k, v from iw_a order by k`.execute(storage.db)
    const b = await sql<{ k: number; v: number }>`select k, v from iw_b order by k`.execute(storage.db)
    expect(a.rows.map((r) => Number(r.v))).toEqual(Array.from({ length: 17500 }, (_, k) => (k < 5000 ? k : 3 * k) + (k === 1 ? 10 : 0)))
    expect(b.rows.map((r) => Number(r.v))).toEqual(Array.from({ length: 17500 }, (_, k) => (k < 5000 ? 2 * k : 4 * k) + (k === 1 ? 20 : 0)))
  })

  it('none, or one alone', async () => {
    await storage.db.transaction().execute((trx) => runIndependentWrites(trx, dialect, []))
    await storage.db.transaction().execute((trx) => runIndependentWrites(trx, dialect, [upsert('iw_b', [[-1, 5]])]))
    expect((await sql<{ v: number }>`select v from iw_b where k = -1`.execute(storage.db)).rows.map((r) => Number(r.v))).toEqual([5])
  })
})
