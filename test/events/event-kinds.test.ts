import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { machine, OPERATOR } from '../gateway/helpers/machine.js'
import { RawDevice, uniqueDeviceId } from '../gateway/helpers/raw-device.js'
import { DIALECTS } from '../helpers/dialects.js'
import { CONSOLE, startEventsApp, type EventsApp } from './events-kit.js'
import type { SseClient } from './sse-client.js'
import { signedReleases } from '../helpers/signed-releases.js'

const { rootPubkey, release } = signedReleases({
  version: { major: 1, minor: 4, revision: 2 },
  payload: (build) => Buffer.from(`firmware build ${build} `.repeat(100)),
  releaseId: (build) => `ev-1.4.2-${build}`,
})

const ENV = {
  DEVICE_ALIVE_SECONDS: '0.5',
  PLATFORM_OFFLINE_SECONDS: '0.5',
  COMMAND_ACK_TIMEOUT_SECONDS: '0.3',
  COMMAND_MAX_ATTEMPTS: '2',
  COMMAND_TTL_SECONDS: '1.5',
  FIRMWARE_ROOT_PUBKEY: rootPubkey,
}

describe.each(DIALECTS)('each event kind reaches a real stream on %s', (dialect) => {
  let t: EventsApp
  let root: SseClient
  const links: RawDevice[] = []
  beforeAll(async () => {
    t = await startEventsApp(dialect, ENV)
    root = await t.stream('root')
  })
  afterAll(async () => {
    for (const link of links) await link.close().catch(() => undefined)
    await t?.close()
  })

  const link = async (id: string) => {
    const device = await RawDevice.link(t.linkUrl, { device_id: id }, machine)
    links.push(device)
    return device
  }
  const deviceLogin = async (username: string, id: string) => {
    const res = await t.app.inject({ method: 'POST', url: `/api/v1/devices/${id}/auth/login`, headers: { authorization: await t.auth(username) }, payload: OPERATOR })
    expect(res.statusCode, res.body).toBe(200)
  }
  const asAdmin = async (method: 'POST' | 'DELETE' | 'GET', url: string, payload?: object) =>
    t.app.inject({ method, url, headers: { authorization: await t.auth('root'), ...CONSOLE }, ...(payload ? { payload } : {}) })
  /** An event `stream` receives after everything raised before it: binds `username` to a fresh device. */
  const marker = async (stream: SseClient, username: string) => {
    const id = uniqueDeviceId()
    await link(id)
    await deviceLogin(username, id)
    await stream.next('binding', (d) => d.device_id === id)
  }
  const ofDevice = (stream: SseClient, kind: string, id: string) => stream.of(kind, (d) => d.device_id === id).map((e) => e.data)

  it('device: a link registers, is taken over, stops being alive, comes back and closes', async () => {
    const id = uniqueDeviceId()
    const first = await link(id)
    expect((await root.next('device', (d) => d.device_id === id)).data).toMatchObject({
      device_id: id,
      alive: true,
      registered: true,
      version: '1.0.0',
      ip: '127.0.0.1',
      last_heartbeat: null,
      reason: 'registered',
    })
    const second = await link(id)
    expect((await first.closed).code).toBe(4409)
    expect((await root.next('device', (d) => d.device_id === id && d.reason === 'taken_over')).data).toMatchObject({ alive: true, registered: true })
    const lost = await root.next('device', (d) => d.device_id === id && d.reason === 'not_alive')
    expect(lost.data).toMatchObject({ alive: false, registered: true })
    second.heartbeat({ state: 'idle' })
    expect((await root.next('device', (d) => d.device_id === id && d.reason === 'alive')).data).toMatchObject({ alive: true, registered: true })
    await second.close()
    const closed = await root.next('device', (d) => d.device_id === id && d.reason === 'closed')
    expect(closed.data).toMatchObject({ alive: false, registered: false })
    expect(typeof closed.data.last_heartbeat).toBe('number')
    expect(closed.data.at as number).toBeGreaterThan(1e9)
    expect(closed.data.at as number).toBeLessThan(1e11)
    // The replaced link's close is not announced: the device stayed linked.
    const reasons = ofDevice(root, 'device', id).map((d) => d.reason)
    expect(reasons.filter((r) => r === 'closed')).toEqual(['closed'])
    expect([reasons[0], reasons.at(-1)]).toEqual(['registered', 'closed'])
  })

  it('device-status: a heartbeat is announced at most once per interval, the latest status last', async () => {
    const id = uniqueDeviceId()
    const device = await link(id)
    device.heartbeat({ n: 1 })
    device.heartbeat({ n: 2 })
    device.heartbeat({ n: 3 })
    await root.next('device-status', (d) => d.device_id === id && (d.status as { n: number }).n === 3)
    expect(ofDevice(root, 'device-status', id).map((d) => d.status)).toEqual([{ n: 1 }, { n: 3 }])
  })

  it('machine-state: a production state event changes the current state; users see it for their machines only', async () => {
    const alice = await t.stream('alice')
    const bob = await t.stream('bob')
    const id = uniqueDeviceId()
    const device = await link(id)
    await deviceLogin('alice', id)
    await alice.next('binding', (d) => d.device_id === id)
    const ts = Math.floor(Date.now() / 1000) - 60
    device.send({ type: 'production', events: [{ id: 'st-1', ts, kind: 'state', state: 'unscheduled_down', reason: 'parts_exhausted' }] })
    const expected = { device_id: id, state: 'unscheduled_down', reason: 'parts_exhausted', at: ts }
    expect((await root.next('machine-state', (d) => d.device_id === id)).data).toEqual(expected)
    expect((await alice.next('machine-state', (d) => d.device_id === id)).data).toEqual(expected)
    await marker(bob, 'bob')
    expect(ofDevice(bob, 'machine-state', id)).toEqual([])
    await device.close()
    expect((await alice.next('machine-state', (d) => d.device_id === id && d.state === 'offline')).data).toMatchObject({ reason: null })
  })

  it('a user sees only the devices bound to them, from the binding on and until it is removed', async () => {
    const alice = await t.stream('alice')
    const bob = await t.stream('bob')
    const x = uniqueDeviceId()
    const other = uniqueDeviceId()
    const deviceX = await link(x)
    const deviceOther = await link(other)
    deviceX.heartbeat({ before: true })
    deviceOther.heartbeat({ never: 'alice' })
    await root.next('device-status', (d) => d.device_id === other)

    await deviceLogin('alice', x)
    expect((await alice.next('binding', (d) => d.device_id === x)).data).toMatchObject({ username: 'alice', device_id: x, bound: true })
    expect((await root.next('binding', (d) => d.device_id === x)).data).toMatchObject({ username: 'alice', bound: true })
    deviceX.heartbeat({ after: true })
    expect((await alice.next('device-status', (d) => d.device_id === x)).data.status).toEqual({ after: true })

    expect((await asAdmin('DELETE', `/api/v1/admin/bindings/alice/${x}`)).statusCode).toBe(200)
    expect((await alice.next('binding', (d) => d.device_id === x && d.bound === false)).data).toMatchObject({ username: 'alice', bound: false })
    await deviceX.close()
    await root.next('device', (d) => d.device_id === x && d.reason === 'closed')
    await marker(alice, 'alice')
    await marker(bob, 'bob')

    expect(ofDevice(alice, 'device-status', x).map((d) => d.status)).toEqual([{ after: true }])
    expect(ofDevice(alice, 'device', x)).toEqual([])
    expect(ofDevice(alice, 'device', other)).toEqual([])
    expect(ofDevice(alice, 'device-status', other)).toEqual([])
    expect(alice.of('binding', (d) => d.username !== 'alice')).toEqual([])
    expect(bob.of('binding', (d) => d.username !== 'bob')).toEqual([])
    expect(ofDevice(bob, 'device-status', x)).toEqual([])
  })

  it("a user's new stream starts with the devices bound to them already", async () => {
    const id = uniqueDeviceId()
    const device = await link(id)
    await deviceLogin('bob', id)
    const bob = await t.stream('bob')
    device.heartbeat({ known: 'at open' })
    expect((await bob.next('device-status', (d) => d.device_id === id)).data.status).toEqual({ known: 'at open' })
  })

  it('binding: forgetting a device removes its bindings', async () => {
    const alice = await t.stream('alice')
    const id = uniqueDeviceId()
    await link(id)
    await deviceLogin('alice', id)
    await alice.next('binding', (d) => d.device_id === id && d.bound === true)
    expect((await asAdmin('DELETE', `/api/v1/admin/devices/${id}`)).statusCode).toBe(200)
    expect((await alice.next('binding', (d) => d.device_id === id && d.bound === false)).data).toMatchObject({ username: 'alice' })
  })

  it('release: an upload, an activation and the release it replaces (administrators only)', async () => {
    const alice = await t.stream('alice')
    const upload = async (build: number) => {
      const { image, manifest } = release(build)
      const form = new FormData()
      form.append('image', new Blob([image]), 'system.bin')
      form.append('manifest', JSON.stringify(manifest))
      const res = await fetch(`${t.url}/api/v1/admin/firmware/slave/releases`, { method: 'POST', body: form, headers: { authorization: await t.auth('root') } })
      expect(res.status).toBe(201)
      return manifest.release as string
    }
    const r1 = await upload(1)
    expect((await root.next('release', (d) => d.release_id === r1)).data).toMatchObject({ display_version: expect.stringMatching(/^1\.4\.2/), active: false, reason: 'uploaded' })
    const r2 = await upload(2)
    for (const id of [r1, r2]) expect((await asAdmin('POST', `/api/v1/admin/firmware/slave/releases/${id}/activate`)).statusCode).toBe(200)
    await root.next('release', (d) => d.release_id === r2 && d.active === true)
    const changes = root.of('release', (d) => d.release_id === r1 || d.release_id === r2).map((e) => [e.data.release_id, e.data.active, e.data.reason])
    expect(changes).toEqual([
      [r1, false, 'uploaded'],
      [r2, false, 'uploaded'],
      [r1, true, 'activated'],
      [r1, false, 'deactivated'],
      [r2, true, 'activated'],
    ])
    await marker(alice, 'alice')
    expect(alice.of('release')).toEqual([])
  })

  it('platform-device: add, a heartbeat after offline, offline found by the sweep, delete (administrators only)', async () => {
    const alice = await t.stream('alice')
    const id = uniqueDeviceId()
    expect((await asAdmin('POST', '/api/admin/device/add', { device_id: id, model: 'm' })).statusCode).toBe(201)
    expect((await root.next('platform-device', (d) => d.device_id === id)).data).toMatchObject({ online: false, last_online_at: null, reason: 'added' })
    const beat = () => t.app.inject({ method: 'POST', url: '/v1/device/heartbeat', payload: { device_id: id } })
    expect((await beat()).statusCode).toBe(200)
    const online = await root.next('platform-device', (d) => d.device_id === id && d.reason === 'online')
    expect(online.data).toMatchObject({ online: true, last_online_at: expect.any(Number) })
    expect(online.data.at as number).toBeGreaterThan(1e12)
    const offline = await root.next('platform-device', (d) => d.device_id === id && d.reason === 'offline')
    expect(offline.data).toMatchObject({ online: false, last_online_at: online.data.last_online_at })
    expect((await beat()).statusCode).toBe(200)
    await root.next('platform-device', (d) => d.device_id === id && d.reason === 'online' && d.at !== online.data.at)
    expect((await asAdmin('POST', `/api/admin/device/${id}/delete`)).statusCode).toBe(200)
    await root.next('platform-device', (d) => d.device_id === id && d.reason === 'deleted')
    const reasons = ofDevice(root, 'platform-device', id).map((d) => d.reason)
    expect(reasons.slice(0, 4)).toEqual(['added', 'online', 'offline', 'online'])
    expect(reasons.at(-1)).toBe('deleted')
    await marker(alice, 'alice')
    expect(alice.of('platform-device')).toEqual([])
  })

  it('command: created, delivered, redelivered, done, failed by ack or out of attempts, expired', async () => {
    const alice = await t.stream('alice')
    const id = uniqueDeviceId()
    await asAdmin('POST', '/api/admin/device/add', { device_id: id, model: 'm' })
    const create = async () => (await asAdmin('POST', `/api/admin/device/${id}/command`, { action: 'reboot', params: {} })).json().command.id as number
    const poll = async () => (await t.app.inject({ method: 'GET', url: `/v1/device/${id}/commands` })).json().commands as { id: number }[]
    const ack = (cid: number, success: boolean) => t.app.inject({ method: 'POST', url: `/v1/device/${id}/commands/ack`, payload: { id: cid, success } })
    const statuses = (cid: number) => root.of('command', (d) => d.id === cid).map((e) => [e.data.status, e.data.attempts])
    const reached = (cid: number, status: string, attempts?: number) =>
      root.next('command', (d) => d.id === cid && d.status === status && (attempts === undefined || d.attempts === attempts))

    const done = await create()
    expect((await reached(done, 'pending')).data).toMatchObject({ device_id: id, id: done, action: 'reboot', attempts: 0 })
    expect((await poll()).map((c) => c.id)).toEqual([done])
    await reached(done, 'delivered', 1)
    // Not acknowledged in time: the next poll delivers it again.
    await expect.poll(async () => (await poll()).map((c) => c.id)).toEqual([done])
    await reached(done, 'delivered', 2)
    await ack(done, true)
    await reached(done, 'done')
    expect(statuses(done)).toEqual([['pending', 0], ['delivered', 1], ['delivered', 2], ['done', 2]])

    const refused = await create()
    await poll()
    await ack(refused, false)
    await reached(refused, 'failed')
    expect(statuses(refused)).toEqual([['pending', 0], ['delivered', 1], ['failed', 1]])

    const unanswered = await create()
    await poll()
    await expect.poll(async () => (await poll()).map((c) => c.id)).toEqual([unanswered])
    // Two deliveries without an ack: the sweep fails it once the ack time-out passes.
    expect((await reached(unanswered, 'failed', 2)).data.attempts).toBe(2)

    const expiring = await create()
    expect((await reached(expiring, 'expired')).data).toMatchObject({ attempts: 0 })
    expect(statuses(expiring)).toEqual([['pending', 0], ['expired', 0]])

    await marker(alice, 'alice')
    expect(alice.of('command')).toEqual([])
  })
})
