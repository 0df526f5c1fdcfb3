import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { describe, expect, it } from 'vitest'
import { DIALECTS, openTestStorage, TEST_POSTGRES_URL } from '../helpers/dialects.js'

// Tests, and deployments sharing one PostgreSQL database, create and drop schemas while others migrate.
describe.skipIf(!DIALECTS.includes('postgres'))('migrations on postgres', () => {
  it('succeed while other schemas of the same database are being dropped', async () => {
    const admin = new pg.Client({ connectionString: TEST_POSTGRES_URL })
    await admin.connect()
    const doomed = Array.from({ length: 40 }, () => `doomed_${randomBytes(5).toString('hex')}`)
    for (const schema of doomed) {
      await admin.query(`create schema ${schema}; ${Array.from({ length: 5 }, (_, i) => `create table ${schema}.t${i} (a int, b text, c bigint)`).join(';')}`)
    }
    let dropping = true
    const dropper = (async () => {
      for (const schema of doomed) {
        if (!dropping) break
        await admin.query(`drop schema ${schema} cascade`)
      }
    })()
    try {
      const results = await Promise.allSettled(Array.from({ length: 6 }, () => openTestStorage('postgres')))
      for (const result of results) if (result.status === 'fulfilled') await result.value.cleanup()
      expect(results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason))).toEqual([])
    } finally {
      dropping = false
      await dropper
      for (const schema of doomed) await admin.query(`drop schema if exists ${schema} cascade`)
      await admin.end()
    }
  })
})
