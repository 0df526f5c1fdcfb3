import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { TelemetryStore, type TimedRecord } from '../../src/platform/telemetry/telemetry-store.js'
import type { Dialect } from '../../src/storage/storage.js'
import { DIALECTS, testDatabase, type TestDatabase } from '../helpers/dialects.js'
import { startTestApp, type TestApp } from '../helpers/test-app.js'
import { CONSOLE } from './platform-kit.js'

const DAY = 86_400_000

/** Points of one device `ageDays` old, written straight to storage (the API refuses points that old). */
async function seed(t: TestApp, deviceId: string, count: number, ageDays: number): Promise<void> {
  const add = await t.app.inject({ method: 'POST', url: '/api/admin/device/add', headers: CONSOLE, payload: { device_id: deviceId, model: 'm' } })
  expect(add.statusCode).toBe(201)
  const store = new TelemetryStore(t.storage)
  const start = Date.now() - ageDays * DAY
  for (let done = 0; done < count; done += 10_000) {
    const records: TimedRecord[] = Array.from({ length: Math.min(10_000, count - done) }, (_, i) => ({ ts: start + done + i, values: { v: i } }))
    await store.insert(deviceId, records)
  }
}

const points = async (t: TestApp, before: number) =>
  Number((await t.storage.db.selectFrom('platform_telemetry').select((eb) => eb.fn.countAll().as('n')).where('ts', '<', before).executeTakeFirstOrThrow()).n)

describe.each(DIALECTS)('retention run by the server itself on %s', (dialect: Dialect) => {
  let database: TestDatabase | undefined
  const apps: TestApp[] = []
  const start = async (env: Record<string, string>) => {
    const t = await startTestApp(dialect, env, { database })
    apps.push(t)
    return t
  }
  const fresh = () => {
    database = testDatabase(dialect, path.join(mkdtempSync(path.join(tmpdir(), 'fg-retention-')), 'fg.db'))
  }
  afterEach(async () => {
    for (const t of apps.splice(0)) await t.app.close().catch(() => undefined)
    await database?.cleanup()
  })

  it('prunes past TELEMETRY_RETENTION_DAYS as soon as it starts, keeping newer points', async () => {
    fresh()
    const seeder = await start({})
    await seed(seeder, 'rt-app', 2500, 9)
    await seed(seeder, 'rt-app-new', 10, 2)
    await seeder.app.close()

    const t = await start({ TELEMETRY_RETENTION_DAYS: '7' })
    await expect.poll(() => points(t, Date.now() - 7 * DAY), { timeout: 20_000 }).toBe(0)
    expect(await points(t, Date.now())).toBe(10)
  })

  it('stops pruning a backlog of 200,000 rows between batches when the server closes', async () => {
    fresh()
    const seeder = await start({})
    await seed(seeder, 'rt-backlog', 200_000, 2)
    await seeder.app.close()

    const t = await start({ TELEMETRY_RETENTION_DAYS: '1' })
    // Pruning started with the server (once it holds the retention lock); closing must not wait for the whole backlog.
    await expect.poll(() => points(t, Date.now() - DAY), { timeout: 30_000, interval: 20 }).toBeLessThan(200_000)
    await t.app.close()
    const left = await startTestApp(dialect, { TELEMETRY_RETENTION_DAYS: '3650' }, { database })
    apps.push(left)
    const remaining = await points(left, Date.now() - DAY)
    expect(remaining).toBeGreaterThan(0)
    expect(remaining).toBeLessThan(200_000)
  }, 120_000)
})
