import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DeviceRepository } from '../../src/gateway/devices/device-repository.js'
import type { DeviceLink } from '../../src/link/device-link.js'
import type { Storage } from '../../src/storage/storage.js'
import { DIALECTS, openTestStorage } from '../helpers/dialects.js'

const DEVICES = 400
/** Heartbeat rounds: each writes every device once. */
const ROUNDS = 5

describe.runIf(DIALECTS.includes('postgres'))('migration 0022 (room on the device rows\' pages) on postgres', () => {
  let storage: Storage & { cleanup(): Promise<void> }
  beforeAll(async () => {
    storage = await openTestStorage('postgres')
  })
  afterAll(() => storage.cleanup())

  it('lets most heartbeat writes stay on their page (HOT updates, no index entries) round after round', async () => {
    const ids = Array.from({ length: DEVICES }, (_, i) => `pnp-room-${String(i).padStart(4, '0')}`)
    await storage.db
      .insertInto('devices')
      .values(ids.map((device_id) => ({ device_id, hostname: 'host', ip: '10.0.0.1', version: '1.0.0', key_hash: `sha256$${'s'.repeat(22)}$${'d'.repeat(43)}`, last_status: '{}', created_at: 0, link_id: `link-${device_id}`, link_instance: 'instance-a' })))
      .execute()
    // One connection throughout: a backend's statistics are its own until it flushes them.
    const hot = await storage.db.connection().execute(async (db) => {
      const repository = new DeviceRepository({ ...storage, db })
      for (let round = 1; round <= ROUNDS; round++) {
        const links = ids.map((deviceId) => ({ deviceId, identity: { linkId: `link-${deviceId}` }, lastHeartbeat: round, lastStatus: { state: 'running', job: `order-${round}` } }) as unknown as DeviceLink)
        await repository.saveStatus(links)
      }
      await sql`select pg_stat_force_next_flush()`.execute(db)
      const { rows } = await sql<{ updated: string; hot: string }>`select n_tup_upd as updated, n_tup_hot_upd as hot from pg_stat_user_tables where schemaname = current_schema() and relname = 'devices'`.execute(db)
      return { updated: Number(rows[0]!.updated), hot: Number(rows[0]!.hot) }
    })
    expect(hot.updated).toBe(DEVICES * ROUNDS)
    expect(hot.hot / hot.updated).toBeGreaterThan(0.5)
  })
})
