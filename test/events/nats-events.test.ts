import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { machine, OPERATOR } from '../gateway/helpers/machine.js'
import { RawDevice, uniqueDeviceId } from '../gateway/helpers/raw-device.js'
import { DIALECTS, testDatabase, type TestDatabase } from '../helpers/dialects.js'
import { CONSOLE, startEventsApp, type EventsApp } from './events-kit.js'
import type { SseClient } from './sse-client.js'
import { natsSuitesRunnable, TEST_NATS_URL } from '../helpers/nats.js'

const NATS_URL = TEST_NATS_URL


const runnable = await natsSuitesRunnable({ needsPostgres: true })

describe.skipIf(!runnable)('events across two instances sharing PostgreSQL and NATS', () => {
  let database: TestDatabase
  let a: EventsApp
  let b: EventsApp
  let onA: SseClient
  let onB: SseClient
  const links: RawDevice[] = []
  beforeAll(async () => {
    database = testDatabase('postgres')
    const env = { NATS_URL, PLATFORM_OFFLINE_SECONDS: '0.5', COMMAND_TTL_SECONDS: '0.5' }
    a = await startEventsApp('postgres', env, { database })
    b = await startEventsApp('postgres', env, { database })
    onA = await a.stream('root')
    onB = await b.stream('root')
  })
  afterAll(async () => {
    for (const link of links) await link.close().catch(() => undefined)
    await a?.close()
    await b?.close()
    await database?.cleanup()
  })

  const admin = async (gw: EventsApp, url: string, payload: object) =>
    gw.app.inject({ method: 'POST', url, headers: { authorization: await gw.auth('root'), ...CONSOLE }, payload })
  const beat = (gw: EventsApp, device_id: string) => gw.app.inject({ method: 'POST', url: '/v1/device/heartbeat', payload: { device_id } })

  it('delivers an event raised on one instance to the streams of both, once each', async () => {
    const id = uniqueDeviceId()
    const device = await RawDevice.link(a.linkUrl, { device_id: id }, machine)
    links.push(device)
    for (const stream of [onA, onB]) expect((await stream.next('device', (d) => d.device_id === id)).data).toMatchObject({ alive: true, registered: true })
    device.heartbeat({ via: 'a' })
    for (const stream of [onA, onB]) expect((await stream.next('device-status', (d) => d.device_id === id)).data.status).toEqual({ via: 'a' })
    expect(onB.of('device', (d) => d.device_id === id)).toHaveLength(1)
    expect(onA.of('device', (d) => d.device_id === id)).toHaveLength(1)
  })

  it("lets a user's stream on B follow a binding made through A", async () => {
    const alice = await b.stream('alice')
    const id = uniqueDeviceId()
    const device = await RawDevice.link(a.linkUrl, { device_id: id }, machine)
    links.push(device)
    const login = await a.app.inject({ method: 'POST', url: `/api/v1/devices/${id}/auth/login`, headers: { authorization: await a.auth('alice') }, payload: OPERATOR })
    expect(login.statusCode).toBe(200)
    expect((await alice.next('binding', (d) => d.device_id === id)).data).toMatchObject({ username: 'alice', bound: true })
    device.heartbeat({ for: 'alice' })
    expect((await alice.next('device-status', (d) => d.device_id === id)).data.status).toEqual({ for: 'alice' })
  })

  it('announces a platform device going offline once, although both instances sweep', async () => {
    const [first, second] = [uniqueDeviceId(), uniqueDeviceId()]
    for (const id of [first, second]) expect((await admin(a, '/api/admin/device/add', { device_id: id, model: 'm' })).statusCode).toBe(201)
    await beat(b, first)
    for (const stream of [onA, onB]) await stream.next('platform-device', (d) => d.device_id === first && d.reason === 'offline')
    // A later device's offline comes from a later sweep: by then any duplicate of the first would have arrived.
    await beat(a, second)
    for (const stream of [onA, onB]) await stream.next('platform-device', (d) => d.device_id === second && d.reason === 'offline')
    for (const stream of [onA, onB]) {
      expect(stream.of('platform-device', (d) => d.device_id === first).map((e) => e.data.reason)).toEqual(['added', 'online', 'offline'])
    }
  })

  it('announces a command expiring once, although both instances sweep', async () => {
    const id = uniqueDeviceId()
    await admin(a, '/api/admin/device/add', { device_id: id, model: 'm' })
    const create = async () => (await admin(b, `/api/admin/device/${id}/command`, { action: 'reboot', params: {} })).json().command.id as number
    const first = await create()
    for (const stream of [onA, onB]) await stream.next('command', (d) => d.id === first && d.status === 'expired')
    const second = await create()
    for (const stream of [onA, onB]) await stream.next('command', (d) => d.id === second && d.status === 'expired')
    for (const stream of [onA, onB]) expect(stream.of('command', (d) => d.id === first).map((e) => e.data.status)).toEqual(['pending', 'expired'])
  })
})
