import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DeviceRepository } from '../../src/gateway/devices/device-repository.js'
import type { LinkClaim } from '../../src/link/link-store.js'
import type { RegisterFrame } from '@fleetgate/device-agent/protocol'
import type { Storage } from '../../src/storage/storage.js'
import { DIALECTS, openTestStorage } from '../helpers/dialects.js'

const frame = (deviceId: string, key: string, extra: Partial<RegisterFrame> = {}): RegisterFrame => ({
  type: 'register',
  device_id: deviceId,
  key,
  hostname: `host-${deviceId}`,
  version: '1.0.0',
  ...extra,
})
const claim = (deviceId: string, linkId: string, hostname = 'h'): LinkClaim => ({ identity: { linkId, deviceId, hostname, ip: '10.0.0.1', version: '2.0.0' }, connectTime: 1_700_000_000.5 })

describe.each(DIALECTS)('registrations in batches (%s)', (dialect) => {
  let storage: Storage & { cleanup(): Promise<void> }
  let repo: DeviceRepository
  beforeAll(async () => {
    storage = await openTestStorage(dialect)
    repo = new DeviceRepository(storage)
  })
  afterAll(() => storage.cleanup())

  it('decides each frame of a batch as one by one would: known keys checked, new ids recorded, a new id twice holds the first key', async () => {
    expect(await repo.admit(frame('known', 'key-of-known-0001'), undefined)).toBe('accepted')
    expect(await repo.admit(frame('reset', 'key-of-reset-0001'), undefined)).toBe('accepted')
    await storage.db.updateTable('devices').set({ key_hash: null }).where('device_id', '=', 'reset').execute()

    const verdicts = await repo.admitAll(
      [
        frame('known', 'key-of-known-0001'),
        frame('known', 'someone-elses-key'),
        frame('fresh', 'key-of-fresh-0001'),
        frame('fresh', 'key-of-fresh-0001'),
        frame('fresh', 'another-key-of-fresh'),
        frame('reset', 'new-key-of-reset-01'),
      ],
      undefined,
    )
    expect(verdicts).toEqual(['accepted', 'wrong_key', 'accepted', 'accepted', 'wrong_key', 'accepted'])
    const fresh = await storage.db.selectFrom('devices').select(['hostname', 'version', 'last_status']).where('device_id', '=', 'fresh').executeTakeFirstOrThrow()
    expect(fresh).toEqual({ hostname: 'host-fresh', version: '1.0.0', last_status: '{}' })
    // The reset key was replaced by the one presented: it is the one checked from now on.
    expect(await repo.admitAll([frame('reset', 'new-key-of-reset-01'), frame('reset', 'key-of-reset-0001')], undefined)).toEqual(['accepted', 'wrong_key'])
  })

  it('records new ids only with the enroll token, and known ids need only their key', async () => {
    const token = 'enroll-token-0123456789'
    const verdicts = await repo.admitAll(
      [frame('enrolled', 'key-of-enrolled-1', { enroll_token: token }), frame('stranger', 'key-of-stranger-1', { enroll_token: 'wrong' }), frame('tokenless', 'key-of-tokenless'), frame('known', 'key-of-known-0001')],
      token,
    )
    expect(verdicts).toEqual(['accepted', 'enroll_refused', 'enroll_refused', 'accepted'])
    const ids = await storage.db.selectFrom('devices').select('device_id').where('device_id', 'in', ['enrolled', 'stranger', 'tokenless']).execute()
    expect(ids.map((r) => r.device_id)).toEqual(['enrolled'])
  })

  it('bumps each device once per claim, twice for a device claimed twice in one batch, and the later claim holds the record', async () => {
    await repo.admitAll([frame('c-1', 'key-of-c-1-0001'), frame('c-2', 'key-of-c-2-0001')], undefined)
    const before = await repo.generations(['c-1', 'c-2'])
    const generations = await repo.claimAll([claim('c-1', 'link-a'), claim('c-2', 'link-b'), claim('c-1', 'link-c', 'h-later'), claim('gone', 'link-d')], 'instance-x')
    expect(generations).toEqual([before.get('c-1')! + 1, before.get('c-2')! + 1, before.get('c-1')! + 2, undefined])
    const rows = await storage.db
      .selectFrom('devices')
      .select(['device_id', 'link_id', 'link_instance', 'hostname', 'ip', 'version', 'connect_time'])
      .where('device_id', 'in', ['c-1', 'c-2'])
      .orderBy('device_id')
      .execute()
    expect(rows.map((r) => ({ ...r, connect_time: Number(r.connect_time) }))).toEqual([
      { device_id: 'c-1', link_id: 'link-c', link_instance: 'instance-x', hostname: 'h-later', ip: '10.0.0.1', version: '2.0.0', connect_time: 1_700_000_000.5 },
      { device_id: 'c-2', link_id: 'link-b', link_instance: 'instance-x', hostname: 'h', ip: '10.0.0.1', version: '2.0.0', connect_time: 1_700_000_000.5 },
    ])
  })

  it('admits and claims 2,500 new devices in one batch (more than one statement holds)', async () => {
    const ids = Array.from({ length: 2500 }, (_, i) => `bulk-${String(i).padStart(4, '0')}`)
    expect(new Set(await repo.admitAll(ids.map((id) => frame(id, `key-of-${id}`)), undefined))).toEqual(new Set(['accepted']))
    const generations = await repo.claimAll(ids.map((id) => claim(id, `link-${id}`)), 'instance-y')
    expect(new Set(generations)).toEqual(new Set([1]))
    const held = await storage.db.selectFrom('devices').select((eb) => eb.fn.countAll<number | string>().as('n')).where('link_instance', '=', 'instance-y').executeTakeFirstOrThrow()
    expect(Number(held.n)).toBe(2500)
  })
})
