import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { keylessPoints } from '../../src/storage/migrations/0011-keyless-points.js'
import type { MigrationContext } from '../../src/storage/migrations/migration-context.js'
import { pruneOldest } from '../../src/storage/prune-step.js'
import type { Storage } from '../../src/storage/storage.js'
import { DIALECTS, openTestStorage } from '../helpers/dialects.js'

async function columnsOf(storage: Storage, table: string): Promise<string[]> {
  const query =
    storage.dialect === 'postgres'
      ? sql<{ name: string }>`select column_name as name from information_schema.columns where table_schema = current_schema() and table_name = ${table} order by ordinal_position`
      : sql<{ name: string }>`select name from pragma_table_info(${table})`
  return (await query.execute(storage.db)).rows.map((r) => r.name)
}

const tsLeft = async (storage: Storage) => (await storage.db.selectFrom('platform_telemetry').select('ts').orderBy('ts').execute()).map((r) => Number(r.ts))

describe.each(DIALECTS)('migration 0011 (keyless points) on %s', (dialect) => {
  let storage: Storage & { cleanup(): Promise<void> }
  beforeAll(async () => {
    storage = await openTestStorage(dialect)
  })
  afterAll(() => storage.cleanup())

  it('leaves PostgreSQL points without an id (SQLite keeps its free rowid alias)', async () => {
    expect(await columnsOf(storage, 'platform_telemetry')).toEqual(dialect === 'postgres' ? ['series_id', 'ts', 'value'] : ['id', 'series_id', 'ts', 'value'])
  })

  it('prunes the oldest points by the engine row id, a batch at a time from where the last ended', async () => {
    await storage.db
      .insertInto('platform_telemetry')
      .values([50, 10, 40, 20, 30, 60].map((ts) => ({ series_id: 1, ts, value: String(ts) })))
      .execute()
    expect(await pruneOldest(storage.db, 'platform_telemetry', 45, 2, undefined, storage.rowId, { kind: 'telemetry' })).toEqual({ deleted: 2, next: 20 })
    expect(await pruneOldest(storage.db, 'platform_telemetry', 45, 2, 20, storage.rowId, { kind: 'telemetry' })).toEqual({ deleted: 2, next: 40 })
    expect(await pruneOldest(storage.db, 'platform_telemetry', 45, 2, 40, storage.rowId, { kind: 'telemetry' })).toEqual({ deleted: 0 })
    expect(await tsLeft(storage)).toEqual([50, 60])
  })

  it('goes down and up again keeping the points', async () => {
    const migration = keylessPoints({ dialect } as MigrationContext)
    await migration.down!(storage.db)
    expect(await columnsOf(storage, 'platform_telemetry')).toContain('id')
    await migration.up(storage.db)
    expect(await tsLeft(storage)).toEqual([50, 60])
  })
})
