import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { summaryIndexes } from '../../src/storage/migrations/0009-summary-indexes.js'
import type { MigrationContext } from '../../src/storage/migrations/migration-context.js'
import type { Storage } from '../../src/storage/storage.js'
import { DIALECTS, openTestStorage } from '../helpers/dialects.js'

/** Index names of a table, as the engine's catalogue lists them. */
async function indexesOf(storage: Storage, table: string): Promise<string[]> {
  const query =
    storage.dialect === 'postgres'
      ? sql<{ name: string }>`select indexname as name from pg_indexes where schemaname = current_schema() and tablename = ${table}`
      : sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name = ${table}`
  return (await query.execute(storage.db)).rows.map((r) => r.name)
}

describe.each(DIALECTS)('migration 0009 (summary indexes) on %s', (dialect) => {
  let storage: Storage & { cleanup(): Promise<void> }
  beforeAll(async () => {
    storage = await openTestStorage(dialect)
  })
  afterAll(() => storage.cleanup())

  it('indexes platform devices by their last heartbeat, for the summary online count', async () => {
    expect(await indexesOf(storage, 'platform_devices')).toContain('platform_devices_last_online')
  })

  it('can run again over a database that has the index (idempotent)', async () => {
    const migration = summaryIndexes({ dialect } as MigrationContext)
    await migration.up(storage.db)
    expect((await indexesOf(storage, 'platform_devices')).filter((n) => n === 'platform_devices_last_online')).toHaveLength(1)
  })
})
