import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { summaryCounts } from '../../src/storage/migrations/0010-summary-counts.js'
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

const tallies = async (storage: Storage) =>
  Object.fromEntries(
    (await storage.db.selectFrom('platform_command_tallies').select((eb) => ['status', eb.fn.sum<number>('n').as('n')]).groupBy('status').execute()).map((r) => [r.status, Number(r.n)]),
  )

describe.each(DIALECTS)('migration 0010 (summary counts) on %s', (dialect) => {
  let storage: Storage & { cleanup(): Promise<void> }
  beforeAll(async () => {
    storage = await openTestStorage(dialect)
  })
  afterAll(() => storage.cleanup())

  it('indexes devices by last heartbeat and device logs by level and time, for the summary', async () => {
    expect(await indexesOf(storage, 'platform_devices')).toContain('platform_devices_last_online')
    expect(await indexesOf(storage, 'platform_logs')).toContain('platform_logs_level_ts')
  })

  it('tallies the finished commands already stored, and can run again over its own result', async () => {
    const row = (status: string, i: number) => ({ device_id: 'mg-1', action: 'ping', params: '{}', status, attempts: 1, created_at: i, delivered_at: null, acked_at: null, result: null, error: null })
    await storage.db
      .insertInto('platform_commands')
      .values([...['done', 'done', 'done', 'failed', 'expired', 'pending', 'delivered'].map(row)])
      .execute()
    const migration = summaryCounts({ dialect } as MigrationContext)
    await migration.up(storage.db)
    expect(await tallies(storage)).toEqual({ done: 3, failed: 1, expired: 1 })
    await migration.up(storage.db)
    expect(await tallies(storage)).toEqual({ done: 3, failed: 1, expired: 1 })
    expect((await indexesOf(storage, 'platform_devices')).filter((n) => n === 'platform_devices_last_online')).toHaveLength(1)
  })
})
