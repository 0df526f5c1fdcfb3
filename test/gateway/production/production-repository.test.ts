import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ProductionRepository } from '../../../src/gateway/production/production-repository.js'
import type { Storage } from '../../../src/storage/storage.js'
import { DIALECTS, openTestStorage } from '../../helpers/dialects.js'
import { insertMachine, insertState } from './production-rows.js'

describe.each(DIALECTS)('the state intervals a window reads (§16) on %s', (dialect) => {
  let storage: Storage & { cleanup(): Promise<void> }
  let repo: ProductionRepository
  const T = 1_800_000_000
  beforeAll(async () => {
    storage = await openTestStorage(dialect)
    repo = new ProductionRepository(storage)
    await insertMachine(storage.db, 'si-1', null)
    await insertMachine(storage.db, 'si-2', null)
    // Long history before the window, two states at the same ts (ordered by event id), a link's
    // close (no event id, first at its ts).
    for (let i = 0; i < 50; i++) await insertState(storage.db, 'si-1', T - 50_000 + i * 1000, i % 2 ? 'standby' : 'engineering', `h-${String(i).padStart(2, '0')}`)
    await insertState(storage.db, 'si-1', T, 'productive', 'a')
    await insertState(storage.db, 'si-1', T, 'standby', 'b')
    await insertState(storage.db, 'si-1', T + 600, 'offline', null)
    await insertState(storage.db, 'si-1', T + 600, 'productive', 'c')
    await insertState(storage.db, 'si-1', T + 5000, 'standby', 'd')
    await insertState(storage.db, 'si-2', T + 100, 'productive', 'x')
  })
  afterAll(() => storage.cleanup())

  const intervals = async (start: number, end: number) =>
    (await repo.stateIntervals({ where: (eb) => eb.and([]) }, { start, end })).map((i) => [i.device_id, i.state, i.ts, i.next_ts]).sort((a, b) => String(a).localeCompare(String(b)))

  it('takes the state in effect at the start and every later one, each up to its next row by (ts, event id)', async () => {
    expect(await intervals(T - 500, T + 1200)).toEqual(
      [
        ['si-1', 'standby', T - 1000, T], // h-49, in effect at the start
        ['si-1', 'productive', T, T], // a: b follows at the same ts
        ['si-1', 'standby', T, T + 600],
        ['si-1', 'offline', T + 600, T + 600], // a link's close sorts before c
        ['si-1', 'productive', T + 600, T + 5000],
      ].sort((a, b) => String(a).localeCompare(String(b))),
    )
    // si-2's only row is its current state: open, not listed. A start exactly on a row's ts takes it.
    expect(await intervals(T, T + 100)).toEqual(
      [
        ['si-1', 'productive', T, T],
        ['si-1', 'standby', T, T + 600],
      ].sort((a, b) => String(a).localeCompare(String(b))),
    )
    expect((await repo.stateIntervals({ deviceId: 'si-1' }, { start: T + 5000, end: T + 6000 })).length).toBe(0)
  })
})
