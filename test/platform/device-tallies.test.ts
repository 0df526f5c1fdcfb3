import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { countDevices, deleteDeviceAndData, insertDevice, recordHeartbeat } from '../../src/platform/devices/device-store.js'
import { deviceTallies } from '../../src/storage/migrations/0021-device-tallies.js'
import type { MigrationContext } from '../../src/storage/migrations/migration-context.js'
import { openStorage, type Storage } from '../../src/storage/storage.js'
import { DIALECTS, openTwoInstances, testDatabase } from '../helpers/dialects.js'

const T0 = 1_700_000_000_000
const device = (device_id: string) => ({ device_id, model: 'm', token_hash: null })

/** What the rows say, to hold the summary's figures against. */
async function counted(storage: Storage, onlineSince: number) {
  const all = await storage.db.selectFrom('platform_devices').select('last_online_at').execute()
  return { total: all.length, online: all.filter((r) => r.last_online_at !== null && Number(r.last_online_at) >= onlineSince).length }
}

describe.each(DIALECTS)('the summary device counts on %s', (dialect) => {
  /** Two handles on one database, as two instances have. */
  let a: Storage
  let b: Storage
  let cleanup: () => Promise<void>
  beforeAll(async () => {
    ;({ a, b, cleanup } = await openTwoInstances(dialect))
  })
  afterAll(() => cleanup())

  it('keep the total exact through concurrent registrations (the same ids raced from both instances) and deletions', async () => {
    const ids = Array.from({ length: 60 }, (_, i) => `dt-${i}`)
    // Every id registered twice at once, once per instance, half by admin add (a transaction) and half by heartbeat.
    const registered = await Promise.all(
      ids.flatMap((id, i) =>
        [a, b].map((s) => (i % 2 === 0 ? s.db.transaction().execute((tx) => insertDevice(tx, device(id), T0)) : insertDevice(s.db, device(id), T0, T0))),
      ),
    )
    expect(registered.filter(Boolean)).toHaveLength(ids.length)
    expect((await countDevices(a.db, T0)).total).toBe(ids.length)

    // Deletions racing registrations of new ids and deletions of the same ids from the other instance.
    await Promise.all([
      ...ids.slice(0, 20).flatMap((id) => [a, b].map((s) => s.db.transaction().execute((tx) => deleteDeviceAndData(tx, id)))),
      ...Array.from({ length: 20 }, (_, i) => insertDevice([a, b][i % 2]!.db, device(`dt-new-${i}`), T0)),
    ])
    const rows = await counted(a, T0)
    expect(rows.total).toBe(60)
    expect(await countDevices(a.db, T0)).toEqual(rows)
    expect(await countDevices(b.db, T0)).toEqual(rows)
  })

  it('count nothing of a registration or deletion whose transaction rolls back', async () => {
    const before = await countDevices(a.db, T0)
    const rollback = new Error('rolled back')
    await expect(a.db.transaction().execute(async (tx) => {
      await insertDevice(tx, device('dt-rolled-back'), T0)
      throw rollback
    })).rejects.toBe(rollback)
    await expect(a.db.transaction().execute(async (tx) => {
      await deleteDeviceAndData(tx, 'dt-30')
      throw rollback
    })).rejects.toBe(rollback)
    expect(await countDevices(a.db, T0)).toEqual(before)
    expect(before).toEqual(await counted(a, T0))
  })

  it('count online exactly at the window edge as heartbeats from both instances move devices across it', async () => {
    const edge = T0 + 3_600_000
    const ids = Array.from({ length: 40 }, (_, i) => `dt-${20 + i}`)
    // Heard just before, at and just after the edge, and long before.
    const times = [edge - 1, edge, edge + 1, T0]
    await Promise.all(ids.map((id, i) => recordHeartbeat([a, b][i % 2]!.db, id, {}, times[i % times.length]!)))
    for (const since of [edge - 1, edge, edge + 1, edge + 2]) expect(await countDevices(a.db, since), `since edge${since - edge}`).toEqual(await counted(a, since))
    expect((await countDevices(a.db, edge)).online).toBe(20)

    // The window moves past some, heartbeats bring others back in, concurrently.
    await Promise.all(ids.filter((_, i) => i % 4 === 3).map((id, i) => recordHeartbeat([a, b][i % 2]!.db, id, {}, edge + 2)))
    for (const since of [edge, edge + 1, edge + 2]) expect(await countDevices(b.db, since)).toEqual(await counted(a, since))
    expect((await countDevices(a.db, edge + 2)).online).toBe(10)
  })
})

describe.each(DIALECTS)('migration 0021 (device tallies) on %s', (dialect) => {
  it('counts the devices already stored, and can run again over its own result', async () => {
    const database = testDatabase(dialect)
    const storage = await openStorage(database.target)
    try {
      await storage.migrate()
      await storage.db
        .insertInto('platform_devices')
        .values(Array.from({ length: 7 }, (_, i) => ({ device_id: `mg-${i}`, model: null, firmware_version: null, ip: null, token_hash: null, expression: null, uptime_s: null, rssi: null, created_at: T0, last_online_at: null })))
        .execute()
      const migration = deviceTallies({} as MigrationContext)
      for (let run = 0; run < 2; run++) {
        await migration.up(storage.db)
        expect((await countDevices(storage.db, T0)).total).toBe(7)
      }
    } finally {
      await storage.close()
      await database.cleanup()
    }
  })
})
