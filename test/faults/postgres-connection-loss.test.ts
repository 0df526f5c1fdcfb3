import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AppError } from '../../src/errors.js'
import { openStorage, type Storage } from '../../src/storage/storage.js'
import { postgresServerProblem, startPostgresServer, type PostgresServer } from '../../src/cluster/postgres-server.js'

function runnable(): boolean {
  const problem = postgresServerProblem()
  if (!problem) return true
  if (process.env.CI) throw new Error(`The PostgreSQL connection-loss test must run in CI: ${problem}`)
  console.warn(`\n!!! Skipping the PostgreSQL connection-loss test: ${problem} !!!\n`)
  return false
}

const uncaught: unknown[] = []
const record = (err: unknown) => uncaught.push(err)

describe.skipIf(!runnable())('a pooled PostgreSQL connection lost while it is checked out', () => {
  let postgres: PostgresServer | undefined
  let storage: Storage | undefined

  beforeAll(async () => {
    postgres = await startPostgresServer()
    storage = await openStorage({ kind: 'postgres', url: postgres.url })
    process.on('uncaughtException', record)
  }, 60_000)

  afterAll(async () => {
    process.off('uncaughtException', record)
    await storage?.close()
    await postgres?.destroy()
  }, 60_000)

  it('fails the transaction with 503 service_unavailable instead of crashing the process, and the pool connects afresh once the server is back', async () => {
    const db = storage!.db
    // Between two statements the pooled client is checked out with no query running: pg then
    // reports the lost connection as an 'error' event on the client, which nobody else listens to.
    const outcome = await db
      .transaction()
      .execute(async (tx) => {
        await sql`select 1`.execute(tx)
        await postgres!.stop('immediate')
        await sql`select 1`.execute(tx)
      })
      .then(
        () => 'committed',
        (err: unknown) => (err instanceof AppError ? err.code : String(err)),
      )
    expect(outcome).toBe('service_unavailable')
    await expect(storage!.ping()).rejects.toMatchObject({ code: 'service_unavailable' })
    await postgres!.start()
    await storage!.ping()
    expect(uncaught).toEqual([])
  })
})
