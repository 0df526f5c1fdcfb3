import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CommandQueue } from '../../src/platform/commands/command-queue.js'
import { DIALECTS, openTestStorage } from '../helpers/dialects.js'
import { settableClock } from '../helpers/test-clocks.js'

const POLICY = { ackTimeoutMs: 30_000, maxAttempts: 3, ttlMs: 600_000 }
const NOW = 1_800_000_000_000

/** The database's clock stands at NOW. A command in each state at NOW, on the edge of each time rule where there is one. */
const COMMANDS = {
  pendingWithinTtl: { status: 'pending', attempts: 0, created_at: NOW - POLICY.ttlMs + 1, delivered_at: null },
  pendingAtTtl: { status: 'pending', attempts: 0, created_at: NOW - POLICY.ttlMs, delivered_at: null },
  ackOverdue: { status: 'delivered', attempts: POLICY.maxAttempts - 1, created_at: NOW - 60_000, delivered_at: NOW - POLICY.ackTimeoutMs },
  ackOverdueOutOfAttempts: { status: 'delivered', attempts: POLICY.maxAttempts, created_at: NOW - 60_000, delivered_at: NOW - POLICY.ackTimeoutMs },
  ackNotYetDue: { status: 'delivered', attempts: 1, created_at: NOW - 60_000, delivered_at: NOW - POLICY.ackTimeoutMs + 1 },
  lastAttemptNotYetDue: { status: 'delivered', attempts: POLICY.maxAttempts, created_at: NOW - 60_000, delivered_at: NOW - POLICY.ackTimeoutMs + 1 },
  done: { status: 'done', attempts: 1, created_at: NOW - 60_000, delivered_at: NOW - 50_000 },
} as const

describe.each(DIALECTS)('command delivery rules on %s', (dialect) => {
  let storage: Awaited<ReturnType<typeof openTestStorage>>
  let queue: CommandQueue
  const ids = new Map<number, keyof typeof COMMANDS>()
  beforeAll(async () => {
    storage = await openTestStorage(dialect)
    queue = new CommandQueue({ ...storage, clock: settableClock(NOW) }, POLICY)
    for (const [name, command] of Object.entries(COMMANDS)) {
      const row = await storage.db
        .insertInto('platform_commands')
        .values({ device_id: 'rules-1', action: 'ping', params: '{}', ...command })
        .returning('id')
        .executeTakeFirstOrThrow()
      ids.set(row.id, name as keyof typeof COMMANDS)
    }
  })
  afterAll(() => storage.cleanup())

  const statuses = async () => {
    const rows = await storage.db.selectFrom('platform_commands').select(['id', 'status']).where('device_id', '=', 'rules-1').execute()
    return Object.fromEntries(rows.map((r) => [ids.get(r.id), r.status]))
  }

  it('a heartbeat counts exactly the commands the next poll hands out, and that poll expires and fails the rest', async () => {
    expect(await queue.countDue('rules-1')).toBe(2)
    const delivered = await queue.poll('rules-1', 50)
    expect(delivered.map((c) => ids.get(c.id))).toEqual(['pendingWithinTtl', 'ackOverdue'])
    // Delivered at the database's time, the one the next delivery's ack time-out is measured from.
    expect(delivered.map((c) => c.delivered_at)).toEqual([NOW, NOW])
    expect(await statuses()).toEqual({
      pendingWithinTtl: 'delivered',
      pendingAtTtl: 'expired',
      ackOverdue: 'delivered',
      ackOverdueOutOfAttempts: 'failed',
      ackNotYetDue: 'delivered',
      lastAttemptNotYetDue: 'delivered',
      done: 'done',
    })
    expect(await queue.countDue('rules-1')).toBe(0)
  })
})
