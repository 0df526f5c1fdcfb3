import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { COMMAND_STATUSES, type CommandStatus } from '../../src/platform/commands/command-record.js'
import { CommandQueue } from '../../src/platform/commands/command-queue.js'
import { deleteDeviceAndData } from '../../src/platform/devices/device-store.js'
import type { Storage } from '../../src/storage/storage.js'
import { DIALECTS, openTestStorage } from '../helpers/dialects.js'
import { settableClock } from '../helpers/test-clocks.js'

/** What a full count of the commands table says (what the summary reported before the tallies). */
async function counted(storage: Storage): Promise<Record<CommandStatus, number>> {
  const rows = await storage.db
    .selectFrom('platform_commands')
    .select((eb) => ['status', eb.fn.countAll<number>().as('n')])
    .groupBy('status')
    .execute()
  const counts = Object.fromEntries(COMMAND_STATUSES.map((s) => [s, 0])) as Record<CommandStatus, number>
  for (const row of rows) counts[row.status as CommandStatus] = Number(row.n)
  return counts
}

describe.each(DIALECTS)('command counts of the summary on %s', (dialect) => {
  let storage: Storage & { cleanup(): Promise<void> }
  beforeAll(async () => {
    storage = await openTestStorage(dialect)
  })
  afterAll(() => storage.cleanup())

  it('stay equal to a full count through every change of state: delivery, acks, expiry, failure, late acks, clearing and device delete', async () => {
    const t0 = 1_700_000_000_000
    // The database's clock, set by the test.
    const clock = settableClock(t0)
    const at = (ms: number) => clock.set(ms)
    const q = new CommandQueue({ ...storage, clock }, { ackTimeoutMs: 1000, maxAttempts: 2, ttlMs: 10_000 })
    const same = async () => expect(await q.countByStatus()).toEqual(await counted(storage))

    for (let i = 0; i < 6; i++) await q.enqueue(storage.db, 'ta-a', 'ping', {})
    const [first, second] = await q.poll('ta-a', 2)
    at(t0 + 10)
    await q.ack('ta-a', [{ id: first!.id, success: true }, { id: second!.id, success: false, error: 'no' }])
    at(t0 + 20)
    await q.ack('ta-a', [{ id: first!.id, success: false }]) // a duplicate changes nothing
    await same()

    at(t0)
    const [lone] = [await q.enqueue(storage.db, 'ta-b', 'ping', {})]
    await q.poll('ta-b', 10)
    at(t0 + 2000)
    await q.poll('ta-b', 10) // ack overdue: delivered again, last attempt
    at(t0 + 4000)
    await q.sweep() // out of attempts → failed
    at(t0 + 20_000)
    await q.sweep() // ta-a's four never delivered → expired
    await q.sweep() // nothing left to change
    const swept = await counted(storage)
    expect([swept.done, swept.failed, swept.expired]).toEqual([1, 2, 4])
    await same()

    // Acks are accepted whatever the state: a late one moves a failed or an expired command to done.
    const expired = await storage.db.selectFrom('platform_commands').select('id').where('status', '=', 'expired').executeTakeFirstOrThrow()
    at(t0 + 30_000)
    await q.ack('ta-b', [{ id: lone!.id, success: true }])
    await q.ack('ta-a', [{ id: expired.id, success: true }])
    await same()

    await q.enqueue(storage.db, 'ta-b', 'ping', {})
    await storage.db.transaction().execute((tx) => q.clear(tx, { device_id: 'ta-a' })) // queued only: none left for ta-a
    await same()
    await storage.db.transaction().execute((tx) => q.clear(tx, { device_id: 'ta-a', all: true }))
    await same()
    await storage.db.transaction().execute((tx) => deleteDeviceAndData(tx, 'ta-b'))
    await same()
    expect(await q.countByStatus()).toEqual({ pending: 0, delivered: 0, done: 0, failed: 0, expired: 0 })
  })
})
