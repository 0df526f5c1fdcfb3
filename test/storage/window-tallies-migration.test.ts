import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { windowTallies } from '../../src/storage/migrations/0020-window-tallies.js'
import type { MigrationContext } from '../../src/storage/migrations/migration-context.js'
import type { Storage } from '../../src/storage/storage.js'
import { recountTallies } from '../../src/storage/window-tallies.js'
import { DIALECTS, openTestStorage } from '../helpers/dialects.js'

const MIN = 60_000
const T0 = 1_700_000_000_000 - (1_700_000_000_000 % MIN)

const tallies = async (storage: Storage) =>
  (
    await storage.db
      .selectFrom('platform_window_tallies')
      .select((eb) => ['kind', 'bucket', eb.fn.sum<number>('n').as('n')])
      .groupBy(['kind', 'bucket'])
      .orderBy('kind')
      .orderBy('bucket')
      .execute()
  ).map((r) => [r.kind, Number(r.bucket) - T0, Number(r.n)])

describe.each(DIALECTS)('migration 0020 (window tallies) on %s', (dialect) => {
  let storage: Storage & { cleanup(): Promise<void> }
  beforeAll(async () => {
    storage = await openTestStorage(dialect)
  })
  afterAll(() => storage.cleanup())

  it('tallies per minute the points and device errors already stored, and can run again over its own result', async () => {
    const { series_id } = await storage.db
      .insertInto('platform_telemetry_series')
      .values({ device_id: 'mt-1', key: 'k', last_ts: T0, last_value: '1' })
      .returning('series_id')
      .executeTakeFirstOrThrow()
    await storage.db
      .insertInto('platform_telemetry')
      .values([T0 - 1, T0, T0 + 1, T0 + MIN - 1, T0 + MIN].map((ts) => ({ series_id, ts, value: '1' })))
      .execute()
    const log = (source: string, level: string, ts: number) => ({ source, device_id: 'mt-1', level, tag: null, message: 'm', ts })
    await storage.db
      .insertInto('platform_logs')
      .values([log('device', 'error', T0), log('device', 'error', T0 + 5), log('device', 'info', T0), log('operation', 'error', T0), log('device', 'error', T0 + 2 * MIN)])
      .execute()
    const expected = [
      ['device_errors', 0, 2],
      ['device_errors', 2 * MIN, 1],
      ['telemetry', -MIN, 1],
      ['telemetry', 0, 3],
      ['telemetry', MIN, 1],
    ]
    const migration = windowTallies({ dialect } as MigrationContext)
    await migration.up(storage.db)
    expect(await tallies(storage)).toEqual(expected)
    await migration.up(storage.db)
    expect(await tallies(storage)).toEqual(expected)
    // The benchmark's recount (rows loaded past the stores) says the same.
    await recountTallies(storage.db)
    expect(await tallies(storage)).toEqual(expected)
  })
})
