import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { DIALECTS } from '../helpers/dialects.js'
import { startGatewayApp, type GatewayApp } from '../gateway/helpers/gateway-app.js'
import { DEVICE_KEY, RawDevice, uniqueDeviceId } from '../gateway/helpers/raw-device.js'

describe.each(DIALECTS)('device registration on %s', (dialect) => {
  let gw: GatewayApp
  beforeAll(async () => {
    gw = await startGatewayApp(dialect, {}, { deviceLink: { registerTimeoutMs: 300 } })
  })
  afterAll(() => gw.close())

  const getDevice = async (id: string) =>
    gw.app.inject({ method: 'GET', url: `/api/v1/devices/${id}`, headers: { authorization: await gw.auth('root') } })

  it('answers a valid register frame with registered and the server time in seconds', async () => {
    const device = await RawDevice.open(gw.linkUrl)
    const before = Date.now() / 1000
    const registered = await device.register({ device_id: 'pnp-reg-1', hostname: 'machine-1', version: '2.3.1', ip: '192.168.1.20' })
    expect(registered).toMatchObject({ type: 'registered', device_id: 'pnp-reg-1' })
    expect(registered.server_time).toBeGreaterThanOrEqual(before - 1)
    expect(registered.server_time).toBeLessThanOrEqual(Date.now() / 1000 + 1)
    const res = await getDevice('pnp-reg-1')
    expect(res.json().device).toMatchObject({ device_id: 'pnp-reg-1', hostname: 'machine-1', version: '2.3.1', ip: '192.168.1.20', registered: true, alive: true, connected: true })
    await device.close()
  })

  it('records the socket address when the device reports no ip', async () => {
    const device = await RawDevice.link(gw.linkUrl, { device_id: 'pnp-reg-noip' })
    expect((await getDevice('pnp-reg-noip')).json().device.ip).toBe('127.0.0.1')
    await device.close()
  })

  it('accepts the first key of an id again on a later link', async () => {
    const first = await RawDevice.link(gw.linkUrl, { device_id: 'pnp-reg-2' })
    await first.close()
    const again = await RawDevice.link(gw.linkUrl, { device_id: 'pnp-reg-2' })
    expect((await getDevice('pnp-reg-2')).json().device.registered).toBe(true)
    await again.close()
  })

  it('refuses a known id with another key (4401) and keeps the linked device', async () => {
    const owner = await RawDevice.link(gw.linkUrl, { device_id: 'pnp-reg-3' })
    const intruder = await RawDevice.open(gw.linkUrl)
    await expect(intruder.register({ device_id: 'pnp-reg-3', key: 'another-key-0123456789' })).rejects.toThrow(/closed 4401/)
    expect((await intruder.closed).code).toBe(4401)
    expect(owner.socket.readyState).toBe(owner.socket.OPEN)
    expect((await getDevice('pnp-reg-3')).json().device.connected).toBe(true)
    await owner.close()
  })

  it('closes a refused link promptly even when frames follow the register frame', async () => {
    await (await RawDevice.link(gw.linkUrl, { device_id: 'pnp-reg-pipelined' })).close()
    const intruder = await RawDevice.open(gw.linkUrl)
    intruder.send({ type: 'register', device_id: 'pnp-reg-pipelined', key: 'another-key-0123456789', hostname: 'h', version: '1' })
    intruder.heartbeat({})
    const started = Date.now()
    expect((await intruder.closed).code).toBe(4401)
    // ws waits 30 s for a close handshake the server would never read.
    expect(Date.now() - started).toBeLessThan(5000)
  })

  it('processes frames sent right behind the register frame once registered', async () => {
    const device = await RawDevice.open(gw.linkUrl)
    const registered = device.next((f) => f.type === 'registered')
    device.send({ type: 'register', device_id: 'pnp-reg-eager', key: DEVICE_KEY, hostname: 'h', version: '1' })
    device.heartbeat({ eager: true })
    await registered
    await expect.poll(async () => (await getDevice('pnp-reg-eager')).json().device.last_status).toEqual({ eager: true })
    await device.close()
  })

  it('lets the newest link of a device win and closes the older one with 4409', async () => {
    const old = await RawDevice.link(gw.linkUrl, { device_id: 'pnp-reg-4', hostname: 'old' })
    const fresh = await RawDevice.link(gw.linkUrl, { device_id: 'pnp-reg-4', hostname: 'new' })
    expect((await old.closed).code).toBe(4409)
    expect((await getDevice('pnp-reg-4')).json().device).toMatchObject({ hostname: 'new', connected: true })
    await fresh.close()
  })

  it('registers 300 links opened at once, each holding its own record', async () => {
    const ids = Array.from({ length: 300 }, (_, i) => `pnp-reg-many-${i}`)
    // From 3 addresses: at most 100 await their register frame per address (the default limit).
    const devices = await Promise.all(ids.map((device_id, i) => RawDevice.link(gw.linkUrl, { device_id, hostname: `host-${device_id}` }, undefined, { localAddress: `127.0.0.${1 + (i % 3)}` })))
    const records = await gw.storage.db.selectFrom('devices').select(['device_id', 'hostname', 'link_id']).where('device_id', 'in', ids).execute()
    expect(records).toHaveLength(300)
    for (const r of records) expect(r).toMatchObject({ hostname: `host-${r.device_id}`, link_id: expect.any(String) })
    expect(new Set(records.map((r) => r.link_id)).size).toBe(300)
    expect((await getDevice('pnp-reg-many-299')).json().device).toMatchObject({ connected: true, alive: true })
    await Promise.all(devices.map((d) => d.close()))
  })

  it('keeps exactly one of five links of one device registering at once, the one the record names; the others close with 4409', async () => {
    const twins = await Promise.all(Array.from({ length: 5 }, () => RawDevice.open(gw.linkUrl)))
    twins.forEach((t, i) => t.send({ type: 'register', device_id: 'pnp-reg-twin', key: DEVICE_KEY, hostname: `twin-${i}`, version: '1.0.0' }))
    const closes = await new Promise<{ code: number }[]>((resolve) => {
      const seen: { code: number }[] = []
      for (const t of twins) void t.closed.then((c) => seen.push(c) === 4 && resolve(seen))
    })
    expect(closes.map((c) => c.code)).toEqual([4409, 4409, 4409, 4409])
    const survivors = twins.filter((t) => t.socket.readyState === t.socket.OPEN)
    expect(survivors).toHaveLength(1)
    const hostname = `twin-${twins.indexOf(survivors[0]!)}`
    await vi.waitFor(async () => expect((await getDevice('pnp-reg-twin')).json().device).toMatchObject({ hostname, connected: true }))
    const answered = await gw.app.inject({ method: 'GET', url: '/api/v1/devices/pnp-reg-twin/tasks/current', headers: { authorization: await gw.auth('root') } })
    expect(answered.statusCode).toBe(200)
    expect(survivors[0]!.requests).toHaveLength(1)
    await survivors[0]!.close()
  })

  it('answers a plain GET without upgrade with 400 in the usual error shape', async () => {
    const res = await gw.app.inject({ method: 'GET', url: '/api/v1/device-link' })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ success: false, error: 'bad_request' })
  })

  it('closes a link that sends no register frame in time with 4408', async () => {
    const device = await RawDevice.open(gw.linkUrl)
    expect((await device.closed).code).toBe(4408)
  })

  it.each([
    ['a heartbeat before registering', { type: 'heartbeat', status: {} }],
    ['invalid JSON', '{"type":'],
    ['an unknown frame type', { type: 'hello' }],
    ['a JSON array', [1, 2]],
    ['a device id with a slash', { type: 'register', device_id: 'a/b', key: DEVICE_KEY, hostname: 'h', version: '1' }],
    ['a device id of 65 characters', { type: 'register', device_id: 'a'.repeat(65), key: DEVICE_KEY, hostname: 'h', version: '1' }],
    ['a key of 15 characters', { type: 'register', device_id: 'pnp-short', key: 'k'.repeat(15), hostname: 'h', version: '1' }],
    ['a key of 257 characters', { type: 'register', device_id: 'pnp-long', key: 'k'.repeat(257), hostname: 'h', version: '1' }],
    ['a register frame without key', { type: 'register', device_id: 'pnp-nokey', hostname: 'h', version: '1' }],
  ])('closes the link with 4400 on %s', async (_name, frame) => {
    const device = await RawDevice.open(gw.linkUrl)
    device.send(frame)
    expect((await device.closed).code).toBe(4400)
  })

  it('closes the link with 4400 on a binary frame', async () => {
    const device = await RawDevice.open(gw.linkUrl)
    device.socket.send(Buffer.from('{"type":"register"}'), { binary: true })
    expect((await device.closed).code).toBe(4400)
  })

  it.each([
    ['a second register frame', { type: 'register', device_id: 'pnp-reg-5', key: DEVICE_KEY, hostname: 'h', version: '1' }],
    ['a response whose id is a number', { type: 'response', id: 7, status: 200, data: {} }],
    ['a heartbeat whose status is not an object', { type: 'heartbeat', status: 'ok' }],
    ['invalid JSON', 'not json'],
    ['a frame type only the gateway sends', { type: 'request', id: 'x', method: 'GET', path: '/', query: {}, body: null, user: { id: 'a', username: 'a', role: 'user' } }],
  ])('closes a registered link with 4400 on %s', async (_name, frame) => {
    const device = await RawDevice.link(gw.linkUrl, { device_id: 'pnp-reg-5' })
    device.send(frame)
    expect((await device.closed).code).toBe(4400)
  })

  it('closes the link with 1009 on a frame over 16 MiB', async () => {
    const device = await RawDevice.link(gw.linkUrl, { device_id: 'pnp-reg-big' })
    device.send({ type: 'heartbeat', status: { blob: 'x'.repeat(16 * 1024 * 1024) } })
    expect((await device.closed).code).toBe(1009)
  })

  it('closes a registered link with 1007 on a text frame of invalid UTF-8, and unlinks it', async () => {
    // ws reports the frame as an 'error' on the server's socket (the route's shared listener takes it) before it closes.
    const device = await RawDevice.link(gw.linkUrl, { device_id: 'pnp-reg-utf8' })
    device.socket.send(Buffer.from([0xc3, 0x28]), { binary: false })
    expect((await device.closed).code).toBe(1007)
    await expect.poll(async () => (await getDevice('pnp-reg-utf8')).json().device.connected).toBe(false)
  })

  it('accepts a frame of exactly 16 MiB', async () => {
    const device = await RawDevice.link(gw.linkUrl, { device_id: 'pnp-reg-max' })
    // A response to no request: ignored, but read whole (a heartbeat status is capped at 64 KiB).
    const head = '{"type":"response","id":"no-such-request","status":200,"data":{"blob":"'
    const tail = '"}}'
    device.send(head + 'x'.repeat(16 * 1024 * 1024 - head.length - tail.length) + tail)
    device.heartbeat({ after: true })
    await expect.poll(async () => (await getDevice('pnp-reg-max')).json().device.last_status).toEqual({ after: true })
    expect(device.socket.readyState).toBe(device.socket.OPEN)
    await device.close()
  })
})

describe.each(DIALECTS)('enrollment on %s', (dialect) => {
  let gw: GatewayApp
  beforeAll(async () => {
    gw = await startGatewayApp(dialect, { DEVICE_ENROLL_TOKEN: 'enroll-secret' })
  })
  afterAll(() => gw.close())

  it('refuses a new id without the enroll token or with a wrong one (4401)', async () => {
    for (const enroll_token of [undefined, 'wrong-secret']) {
      const device = await RawDevice.open(gw.linkUrl)
      await expect(device.register({ device_id: uniqueDeviceId(), ...(enroll_token ? { enroll_token } : {}) })).rejects.toThrow(/closed 4401/)
    }
  })

  it('records a new id presenting the enroll token, and later links need only the key', async () => {
    const id = uniqueDeviceId()
    const first = await RawDevice.link(gw.linkUrl, { device_id: id, enroll_token: 'enroll-secret' })
    await first.close()
    const later = await RawDevice.link(gw.linkUrl, { device_id: id })
    const listed = await gw.app.inject({ method: 'GET', url: `/api/v1/devices/${id}`, headers: { authorization: await gw.auth('root') } })
    expect(listed.statusCode).toBe(200)
    expect(listed.json().device).toMatchObject({ device_id: id, registered: true, alive: true })
    await later.close()
  })

  it('after a key reset, takes a new key only with the enroll token (4401 without it)', async () => {
    const id = uniqueDeviceId()
    const first = await RawDevice.link(gw.linkUrl, { device_id: id, enroll_token: 'enroll-secret' })
    const reset = await gw.app.inject({ method: 'DELETE', url: `/api/v1/admin/devices/${id}/key`, headers: { authorization: await gw.auth('root') } })
    expect(reset.statusCode).toBe(200)
    expect((await first.closed).code).toBe(4401)
    for (const enroll_token of [undefined, 'wrong-secret']) {
      const device = await RawDevice.open(gw.linkUrl)
      await expect(device.register({ device_id: id, key: 'a-new-key-after-reset', ...(enroll_token ? { enroll_token } : {}) })).rejects.toThrow(/closed 4401/)
    }
    // Neither refusal recorded its key: the one presented with the token is trusted.
    const enrolled = await RawDevice.link(gw.linkUrl, { device_id: id, key: 'another-key-after-reset', enroll_token: 'enroll-secret' })
    await enrolled.close()
    const later = await RawDevice.link(gw.linkUrl, { device_id: id, key: 'another-key-after-reset' })
    await later.close()
  })
})
