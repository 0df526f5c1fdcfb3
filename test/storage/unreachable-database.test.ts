import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { freePort } from '../../src/cluster/local-cluster.js'
import { AppError } from '../../src/errors.js'
import { openStorage } from '../../src/storage/storage.js'
import { isConnectionFailure } from '../../src/storage/unreachable-database.js'

const coded = (message: string, code: string) => Object.assign(new Error(message), { code })

describe('connection-level database errors', () => {
  it('are told apart from statements that failed', () => {
    const outage = [
      coded('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'),
      coded('read ECONNRESET', 'ECONNRESET'),
      coded('terminating connection due to administrator command', '57P01'),
      coded('terminating connection because of crash of another server process', '57P02'),
      coded('the database system is starting up', '57P03'),
      coded('connection failure', '08006'),
      coded('SSL SYSCALL error', '08000'),
      new Error('Connection terminated unexpectedly'),
      new Error('Connection terminated due to connection timeout'),
      new Error('timeout exceeded when trying to connect'),
      new Error('Client has encountered a connection error and is not queryable'),
      new AggregateError([coded('connect ECONNREFUSED ::1:5432', 'ECONNREFUSED'), coded('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')]),
    ]
    const statements = [
      coded('duplicate key value violates unique constraint', '23505'),
      coded('syntax error at or near "selct"', '42601'),
      coded('canceling statement due to statement timeout', '57014'),
      coded('could not serialize access', '40001'),
      new Error('no result'),
      new AggregateError([]),
      'ECONNREFUSED',
      undefined,
    ]
    expect(outage.filter((err) => !isConnectionFailure(err))).toEqual([])
    expect(statements.filter((err) => isConnectionFailure(err))).toEqual([])
  })

  it('come out of PostgreSQL storage as 503 service_unavailable, for a query as for a transaction', async () => {
    // Nothing listens on the port: every connection attempt is refused.
    const storage = await openStorage({ kind: 'postgres', url: `postgres://postgres@127.0.0.1:${await freePort()}/none` })
    try {
      const failures = await Promise.allSettled([
        storage.ping(),
        storage.db.selectFrom('devices').select('device_id').execute(),
        storage.db.transaction().execute((tx) => sql`select 1`.execute(tx)),
        storage.exclusive('outage-test', async () => 1),
      ])
      for (const failure of failures) {
        expect(failure.status).toBe('rejected')
        const reason = (failure as PromiseRejectedResult).reason as AppError
        expect(reason).toBeInstanceOf(AppError)
        expect([reason.code, reason.statusCode]).toEqual(['service_unavailable', 503])
        expect(isConnectionFailure(reason.cause)).toBe(true)
      }
    } finally {
      await storage.close()
    }
  })
})
