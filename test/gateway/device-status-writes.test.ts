import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DeviceRepository } from '../../src/gateway/devices/device-repository.js'
import { DeviceLink } from '../../src/link/device-link.js'
import type { Storage } from '../../src/storage/storage.js'
import { detachedLinkMetrics, idleSocket } from '../helpers/detached-links.js'
import { DIALECTS, openTestStorage } from '../helpers/dialects.js'

const metrics = detachedLinkMetrics

describe.each(DIALECTS)('heartbeat writes of the device registry (%s)', (dialect) => {
  let storage: Storage & { cleanup(): Promise<void> }
  let repo: DeviceRepository
  const socket = idleSocket()

  beforeAll(async () => {
    storage = await openTestStorage(dialect)
    repo = new DeviceRepository(storage)
  })
  afterAll(() => storage.cleanup())

  /** Records the device and claims it for a new link carrying `state` in its last heartbeat. */
  async function linked(deviceId: string, linkId: string, state: string, heartbeat: number): Promise<DeviceLink> {
    const frame = { type: 'register', device_id: deviceId, key: `key-of-${deviceId}-0000`, hostname: 'h', version: '1' } as const
    expect(await repo.admit(frame, undefined)).toBe('accepted')
    const identity = { linkId, deviceId, hostname: 'h', ip: '127.0.0.1', version: '1' }
    const generation = await repo.claim(identity, 1, 'instance-a')
    const link = new DeviceLink(identity, generation!, socket, metrics)
    link.lastHeartbeat = heartbeat
    link.lastStatus = { state, nested: { quote: "it's" } }
    return link
  }

  it('writes the heartbeats of thousands of links in one flush, each to its own record', async () => {
    const ids = Array.from({ length: 2500 }, (_, i) => `many-${String(i).padStart(4, '0')}`)
    await storage.db
      .insertInto('devices')
      .values(ids.map((id) => ({ device_id: id, hostname: 'h', ip: '', version: '1', key_hash: null, last_status: '{}', created_at: 1, link_id: `link-${id}` })))
      .execute()
    const links = ids.map((id, i) => {
      const link = new DeviceLink({ linkId: `link-${id}`, deviceId: id, hostname: 'h', ip: '', version: '1' }, 1, socket, metrics)
      link.lastHeartbeat = 1_700_000_000.25 + i
      link.lastStatus = { state: `s${i}`, nested: { quote: "it's" } }
      return link
    })
    await repo.saveStatus(links)
    const rows = await storage.db.selectFrom('devices').select(['device_id', 'last_heartbeat', 'last_status']).where('device_id', 'like', 'many-%').orderBy('device_id').execute()
    expect(rows).toHaveLength(2500)
    rows.forEach((row, i) => {
      expect(Number(row.last_heartbeat)).toBe(1_700_000_000.25 + i)
      expect(JSON.parse(row.last_status)).toEqual({ state: `s${i}`, nested: { quote: "it's" } })
    })
  })

  it('leaves a record a newer link holds untouched, and writes the others of the same flush', async () => {
    const stale = await linked('stale-1', 'link-old', 'old', 100)
    const newer = await linked('stale-1', 'link-new', 'new', 200)
    const other = await linked('stale-2', 'link-other', 'other', 300)
    await repo.saveStatus([newer])
    await repo.saveStatus([stale, other])
    const rows = await storage.db.selectFrom('devices').select(['device_id', 'last_heartbeat', 'last_status']).where('device_id', 'in', ['stale-1', 'stale-2']).orderBy('device_id').execute()
    expect(rows.map((r) => [r.device_id, Number(r.last_heartbeat), JSON.parse(r.last_status).state])).toEqual([
      ['stale-1', 200, 'new'],
      ['stale-2', 300, 'other'],
    ])
  })

  it('skips links that sent no heartbeat yet', async () => {
    const silent = await linked('silent-1', 'link-silent', 'none', 0)
    silent.lastHeartbeat = null
    await repo.saveStatus([silent])
    const row = await storage.db.selectFrom('devices').select(['last_heartbeat', 'last_status']).where('device_id', '=', 'silent-1').executeTakeFirstOrThrow()
    expect(row).toEqual({ last_heartbeat: null, last_status: '{}' })
  })

  it('clears the holder of closed links in one write, keeping the last heartbeat, and leaves records newer links hold', async () => {
    const beaten = await linked('closing-1', 'link-c1', 'last words', 500)
    const silent = await linked('closing-2', 'link-c2', 'unused', 0)
    silent.lastHeartbeat = null
    const stale = await linked('closing-3', 'link-c3-old', 'old', 600)
    await linked('closing-3', 'link-c3-new', 'new', 700)
    await repo.saveStatus([beaten])
    beaten.lastHeartbeat = 550
    beaten.lastStatus = { state: 'final' }
    await repo.linksClosed([beaten, silent, stale])
    const rows = await storage.db
      .selectFrom('devices')
      .select(['device_id', 'last_heartbeat', 'last_status', 'link_id', 'link_instance'])
      .where('device_id', 'in', ['closing-1', 'closing-2', 'closing-3'])
      .orderBy('device_id')
      .execute()
    expect(rows.map((r) => [r.device_id, r.last_heartbeat === null ? null : Number(r.last_heartbeat), JSON.parse(r.last_status), r.link_id, r.link_instance])).toEqual([
      ['closing-1', 550, { state: 'final' }, null, null],
      ['closing-2', null, {}, null, null],
      ['closing-3', null, {}, 'link-c3-new', 'instance-a'],
    ])
  })
})
