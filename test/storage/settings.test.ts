import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { getOrCreateSetting } from '../../src/storage/settings-repository.js'
import type { Storage } from '../../src/storage/storage.js'
import { DIALECTS, openTestStorage } from '../helpers/dialects.js'

describe.each(DIALECTS)('storage on %s', (dialect) => {
  let storage: Storage & { cleanup(): Promise<void> }
  beforeAll(async () => {
    storage = await openTestStorage(dialect)
  })
  afterAll(() => storage.cleanup())

  it('starts again on a migrated database: no migration runs twice and the data stays', async () => {
    const applied = async () => (await sql<{ name: string }>`select name from kysely_migration order by name`.execute(storage.db)).rows.map((r) => r.name)
    const before = await applied()
    expect(before.length).toBeGreaterThan(0)
    await getOrCreateSetting(storage.db, 'kept-across-starts', () => 'first start')
    await storage.migrate()
    await storage.migrate()
    expect(await applied()).toEqual(before)
    expect(await getOrCreateSetting(storage.db, 'kept-across-starts', () => 'second start')).toMatchObject({ value: 'first start', created: false })
  })

  it('creates a setting once, even when many callers race for it', async () => {
    let made = 0
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => getOrCreateSetting(storage.db, 'race', () => `value-${i}-${++made}`)),
    )
    const values = new Set(results.map((r) => r.value))
    expect(values.size).toBe(1)
    expect(results.filter((r) => r.created)).toHaveLength(1)
    expect((await getOrCreateSetting(storage.db, 'race', () => 'other')).value).toBe([...values][0])
  })

  it('returns 64-bit integers and doubles as JS numbers', async () => {
    const now = Date.now() / 1000
    await storage.db
      .insertInto('users')
      .values({ id: 'u1', username: 'u1', display_name: 'U', role: 'user', avatar_url: null, provider: null, created_at: now, updated_at: now })
      .execute()
    const row = await storage.db.selectFrom('users').select(['created_at']).where('id', '=', 'u1').executeTakeFirstOrThrow()
    expect(row.created_at).toBeCloseTo(now, 3)
    const count = await storage.db.selectFrom('users').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()
    expect(count.n).toBe(1)
  })
})
