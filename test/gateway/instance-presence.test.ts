import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SseClient } from '../events/sse-client.js'
import { DIALECTS } from '../helpers/dialects.js'
import { startGatewayApp, type GatewayApp } from './helpers/gateway-app.js'
import { RawDevice, uniqueDeviceId } from './helpers/raw-device.js'

describe.each(DIALECTS)('presence after an instance dies, on %s', (dialect) => {
  let t: GatewayApp
  let stream: SseClient
  const devices: RawDevice[] = []

  beforeAll(async () => {
    t = await startGatewayApp(dialect, {}, { presence: { beatMs: 50, lostAfterMs: 400 } })
    stream = await SseClient.open(`${t.url}/api/v1/events`, await t.auth('admin'))
  })
  afterAll(async () => {
    stream.close()
    await Promise.all(devices.map((d) => d.close()))
    await t.close()
  })

  const linkOf = async (id: string) =>
    (await t.storage.db.selectFrom('devices').select(['link_instance', 'link_id']).where('device_id', '=', id).executeTakeFirstOrThrow()).link_instance

  it("unlinks the devices of an instance that stopped beating, with their device events, and leaves live instances' devices alone", async () => {
    const mine = await RawDevice.link(t.linkUrl, { device_id: uniqueDeviceId('mine') })
    devices.push(mine)
    const orphan = uniqueDeviceId('orphan')
    const now = Date.now() / 1000
    // A device whose link is held by an instance that was killed: its record says linked, nobody holds it.
    await t.storage.db
      .insertInto('devices')
      .values({ device_id: orphan, hostname: orphan, ip: '10.0.0.9', version: '2.3.1', key_hash: null, last_status: '{}', connect_time: now - 60, last_heartbeat: now - 5, link_instance: 'killed-instance', link_id: 'l1', created_at: now - 60 })
      .execute()
    await t.storage.db.insertInto('instances').values({ instance_id: 'killed-instance', started_at: now - 60, last_seen: now - 1 }).execute()
    const event = await stream.next('device', (d) => d.device_id === orphan)
    expect(event.data).toMatchObject({ alive: false, registered: false, reason: 'instance_lost', ip: '10.0.0.9', version: '2.3.1' })
    expect(await linkOf(orphan)).toBeNull()
    expect(await t.storage.db.selectFrom('instances').select('instance_id').where('instance_id', '=', 'killed-instance').executeTakeFirst()).toBeUndefined()
    const listed = (await (await fetch(`${t.url}/api/v1/devices/${orphan}`, { headers: { authorization: await t.auth('admin') } })).json()) as { device: unknown }
    expect(listed.device).toMatchObject({ alive: false, registered: false })
    // This instance's own device stays linked.
    const mineId = (mine.received[0] as { device_id: string }).device_id
    expect(await linkOf(mineId)).not.toBeNull()
  })

  it('unlinks, within a few sweeps, the devices of an instance that left no record at all', async () => {
    const orphan = uniqueDeviceId('unrecorded')
    const now = Date.now() / 1000
    await t.storage.db
      .insertInto('devices')
      .values({ device_id: orphan, hostname: orphan, ip: '10.0.0.8', version: '2.3.1', key_hash: null, last_status: '{}', connect_time: now - 60, last_heartbeat: now - 5, link_instance: 'never-recorded', link_id: 'l2', created_at: now - 60 })
      .execute()
    const event = await stream.next('device', (d) => d.device_id === orphan)
    expect(event.data).toMatchObject({ alive: false, registered: false, reason: 'instance_lost' })
    expect(await linkOf(orphan)).toBeNull()
  })

  it('writes its links back and announces them when it finds itself swept after a silence', async () => {
    const device = await RawDevice.link(t.linkUrl, { device_id: uniqueDeviceId('back') })
    devices.push(device)
    const id = (device.received[0] as { device_id: string }).device_id
    const announced = () => stream.of('device', (d) => d.device_id === id && d.registered === true && d.alive === true).length
    await expect.poll(announced).toBe(1)
    // Another instance presumed this one dead: its record and its devices' links are gone.
    await t.storage.db.deleteFrom('instances').execute()
    await t.storage.db.updateTable('devices').set({ link_instance: null, link_id: null }).where('device_id', '=', id).execute()
    await expect.poll(announced).toBe(2)
    await expect.poll(() => linkOf(id)).not.toBeNull()
  })

  it('writes back every link it still holds in one pass, and none that a newer link took over meanwhile', async () => {
    const linked = await Promise.all(['many-a', 'many-b', 'many-c'].map((p) => RawDevice.link(t.linkUrl, { device_id: uniqueDeviceId(p) })))
    devices.push(...linked)
    const ids = linked.map((d) => (d.received[0] as { device_id: string }).device_id)
    const holder = await linkOf(ids[0]!)
    await t.storage.db.deleteFrom('instances').execute()
    await t.storage.db.updateTable('devices').set({ link_instance: null, link_id: null }).where('device_id', 'in', ids.slice(0, 2)).execute()
    // The third device linked elsewhere meanwhile: a newer generation holds its record.
    await t.storage.db
      .updateTable('devices')
      .set((eb) => ({ link_instance: 'another-instance', link_id: 'newer-link', link_generation: eb('link_generation', '+', 1) }))
      .where('device_id', '=', ids[2]!)
      .execute()
    await expect.poll(() => Promise.all(ids.slice(0, 2).map(linkOf))).toEqual([holder, holder])
    expect(await linkOf(ids[2]!)).toBe('another-instance')
  })

  it('unlinks all 2,500 devices of a lost instance (more than one statement holds), each with its event, and then drops its record', async () => {
    const now = Date.now() / 1000
    const prefix = uniqueDeviceId('fleet')
    const ids = Array.from({ length: 2500 }, (_, i) => `${prefix}-${String(i).padStart(4, '0')}`)
    for (let i = 0; i < ids.length; i += 500) {
      await t.storage.db
        .insertInto('devices')
        .values(ids.slice(i, i + 500).map((id) => ({ device_id: id, hostname: id, ip: '', version: '1', key_hash: null, last_status: '{}', link_instance: 'big-lost', link_id: `l-${id}`, created_at: now })))
        .execute()
    }
    await t.storage.db.insertInto('instances').values({ instance_id: 'big-lost', started_at: now - 60, last_seen: now - 1 }).execute()
    await expect.poll(() => stream.of('device', (d) => String(d.device_id).startsWith(prefix) && d.reason === 'instance_lost').length, { timeout: 10_000 }).toBe(2500)
    const still = await t.storage.db.selectFrom('devices').select('device_id').where('link_instance', '=', 'big-lost').execute()
    expect(still).toEqual([])
    await expect.poll(async () => (await t.storage.db.selectFrom('instances').select('instance_id').where('instance_id', '=', 'big-lost').execute()).length).toBe(0)
  })

  it.runIf(dialect === 'postgres')('skips a device a claim holds locked, sweeps the others, and takes it on a later pass once free', async () => {
    const now = Date.now() / 1000
    const [held, free] = [uniqueDeviceId('held'), uniqueDeviceId('free')]
    // The instance beats (a record far in the future) until the claim holds its row: a sweep
    // that ran before the lock was taken would unlink both devices and prove nothing.
    await t.storage.db.insertInto('instances').values({ instance_id: 'lost-while-locked', started_at: now - 60, last_seen: now + 3600 }).execute()
    await t.storage.db
      .insertInto('devices')
      .values([held, free].map((id) => ({ device_id: id, hostname: id, ip: '', version: '1', key_hash: null, last_status: '{}', link_instance: 'lost-while-locked', link_id: `l-${id}`, created_at: now })))
      .execute()
    await t.storage.db.transaction().execute(async (tx) => {
      await tx.selectFrom('devices').select('device_id').where('device_id', '=', held).forUpdate().execute()
      await t.storage.db.updateTable('instances').set({ last_seen: now - 1 }).where('instance_id', '=', 'lost-while-locked').execute()
      await stream.next('device', (d) => d.device_id === free && d.reason === 'instance_lost')
      // The record of the lost instance stays while a device still names it.
      expect(await t.storage.db.selectFrom('instances').select('instance_id').where('instance_id', '=', 'lost-while-locked').execute()).toHaveLength(1)
      expect(stream.of('device', (d) => d.device_id === held)).toEqual([])
    })
    await stream.next('device', (d) => d.device_id === held && d.reason === 'instance_lost')
    expect(await linkOf(held)).toBeNull()
    await expect.poll(async () => (await t.storage.db.selectFrom('instances').select('instance_id').where('instance_id', '=', 'lost-while-locked').execute()).length).toBe(0)
  })
})
