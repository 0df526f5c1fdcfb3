import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type CompiledQuery,
} from 'kysely'
import { describe, expect, it } from 'vitest'
import { pointInsert, seriesInsert, type PointRow, type SeriesRow } from '../../src/platform/telemetry/telemetry-statements.js'
import type { Database } from '../../src/storage/database.js'
import type { Dialect } from '../../src/storage/storage.js'

/** Kysely with the engine's own compiler and no connection: these tests only compile. */
const compilerOf = (dialect: Dialect) =>
  new Kysely<Database>({
    dialect:
      dialect === 'postgres'
        ? { createAdapter: () => new PostgresAdapter(), createDriver: () => new DummyDriver(), createIntrospector: (db) => new PostgresIntrospector(db), createQueryCompiler: () => new PostgresQueryCompiler() }
        : { createAdapter: () => new SqliteAdapter(), createDriver: () => new DummyDriver(), createIntrospector: (db) => new SqliteIntrospector(db), createQueryCompiler: () => new SqliteQueryCompiler() },
  })

/**
 * Each row of the statement's VALUES as {column: parameter}, read from its SQL text: the column
 * list after the table name, and each placeholder (`?` in turn, or `$n`) mapped to its parameter.
 */
function valuesByColumn({ sql, parameters }: CompiledQuery): Record<string, unknown>[] {
  const [, columnList, valuesList] = /^insert into "\w+" \(([^)]*)\) values (.*?)(?: on conflict|$)/.exec(sql)!
  const columns = columnList!.split(', ').map((c) => c.replace(/"/g, ''))
  let next = 0
  return [...valuesList!.matchAll(/\(([^)]*)\)/g)].map(([, tuple]) => {
    const placeholders = tuple!.split(', ')
    expect(placeholders).toHaveLength(columns.length)
    return Object.fromEntries(placeholders.map((p, i) => [columns[i], parameters[p === '?' ? next++ : Number(p.slice(1)) - 1]]))
  })
}

const points: PointRow[] = [
  { series_id: 11, ts: 1_700_000_000_001, value: '"first"' },
  { series_id: 12, ts: 1_700_000_000_002, value: '2' },
  { series_id: 13, ts: 1_700_000_000_003, value: 'true' },
]
const series: SeriesRow[] = [
  { device_id: 'dev-a', key: 'temp', last_ts: 1_700_000_000_001, last_value: '21.5' },
  { device_id: 'dev-b', key: 'ok', last_ts: 1_700_000_000_002, last_value: 'false' },
]

describe.each(['sqlite', 'postgres'] as const)('telemetry write statements on %s', (dialect) => {
  const db = compilerOf(dialect)

  it.each([
    ['point insert', () => pointInsert(db), points],
    ['series insert', () => seriesInsert(db), series],
  ] as const)('%s: every value lands under its own column, the first statement of a row count and the cached ones', (_name, make, rows) => {
    const statement = make()
    const first = statement.statements(rows as never)
    const again = statement.statements([...rows].reverse() as never)
    expect(first).toHaveLength(1)
    expect(valuesByColumn(first[0]!)).toEqual(rows)
    expect(again[0]!.sql).toBe(first[0]!.sql)
    expect(valuesByColumn(again[0]!)).toEqual([...rows].reverse())
  })

  it('points: the cached statement is what Kysely compiles for the same rows', () => {
    const statement = pointInsert(db)
    statement.statements(points)
    const cached = statement.statements(points)[0]!
    const kysely = db.insertInto('platform_telemetry').values(points).compile()
    expect({ sql: cached.sql, parameters: cached.parameters }).toEqual({ sql: kysely.sql, parameters: kysely.parameters })
  })

  it('splits rows into statements of at most 1000 rows, in order', () => {
    const many: PointRow[] = Array.from({ length: 2500 }, (_, i) => ({ series_id: i, ts: i, value: String(i) }))
    const statements = pointInsert(db).statements(many)
    expect(statements.map((s) => s.parameters.length / 3)).toEqual([1000, 1000, 500])
    expect(statements.flatMap(valuesByColumn)).toEqual(many)
  })
})
