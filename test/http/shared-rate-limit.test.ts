import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SharedRateLimit } from '../../src/http/shared-rate-limit.js'
import { openStorage, type Storage } from '../../src/storage/storage.js'
import { DIALECTS, testDatabase, type TestDatabase } from '../helpers/dialects.js'
import { settableClock } from '../helpers/test-clocks.js'

describe.each(DIALECTS)('a limit shared by instances (rate_hits) on %s', (dialect) => {
  let database: TestDatabase
  let storage: Storage
  beforeAll(async () => {
    database = testDatabase(dialect)
    storage = await openStorage(database.target)
    await storage.migrate()
  })
  afterAll(async () => {
    await storage.close()
    await database.cleanup()
  })

  it('counts every instance’s hits in one window of the database’s clock, and lets hits in again once it has passed', async () => {
    const clock = settableClock(Date.UTC(2026, 10, 28, 12))
    // Two instances; their own clocks play no part.
    const [a, b] = [new SharedRateLimit(storage.db, 'test', 3, 60_000, clock), new SharedRateLimit(storage.db, 'test', 3, 60_000, clock)]
    await a.hit('client-1', 'slow down')
    await b.hit('client-1', 'slow down')
    clock.advance(30_000)
    await a.hit('client-1', 'slow down')
    await expect(b.hit('client-1', 'slow down')).rejects.toMatchObject({ code: 'rate_limited', extra: { retry_after: 30 } })
    await b.hit('client-2', 'slow down')
    // The first two hits leave the window 60 s after they came.
    clock.advance(30_001)
    await b.hit('client-1', 'slow down')
  })
})
