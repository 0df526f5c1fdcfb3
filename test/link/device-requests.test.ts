import WebSocket from 'ws'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MAX_IN_FLIGHT } from '@fleetgate/device-agent/protocol'
import { DIALECTS } from '../helpers/dialects.js'
import { startGatewayApp, type GatewayApp } from '../gateway/helpers/gateway-app.js'
import { DEVICE_KEY, RawDevice } from '../gateway/helpers/raw-device.js'

describe.each(DIALECTS)('requests over the device link on %s', (dialect) => {
  let gw: GatewayApp
  let root: string
  beforeAll(async () => {
    gw = await startGatewayApp(dialect, { DEVICE_REQUEST_TIMEOUT_MS: '10000' })
    root = await gw.auth('root')
  })
  afterAll(() => gw.close())

  const position = (id: string, query = '') =>
    gw.app.inject({ method: 'GET', url: `/api/v1/devices/${id}/hardware/position${query}`, headers: { authorization: root } })
  const metric = async (name: string) => {
    const text = (await gw.app.inject({ method: 'GET', url: '/metrics' })).body
    const line = text.split('\n').find((l) => l.startsWith(name + ' ') || l.startsWith(name + '{'))
    return line ? Number(line.split(' ').at(-1)) : undefined
  }

  it('fails a pending request with 502 at once when the link drops, not after the time-out', async () => {
    const device = await RawDevice.link(gw.linkUrl, { device_id: 'pnp-drop' }, () => undefined)
    const arrived = device.nextRequest()
    const pending = position('pnp-drop')
    await arrived
    device.socket.terminate()
    // 502, not the 504 the 10 s time-out would give: the drop failed it (no clock needed).
    const res = await pending
    expect(res.statusCode).toBe(502)
    expect(res.json()).toMatchObject({ success: false, error: 'device_unavailable' })
  })

  it(`answers 503 without forwarding past ${MAX_IN_FLIGHT} requests in flight`, async () => {
    const device = await RawDevice.link(gw.linkUrl, { device_id: 'pnp-busy' }, () => undefined)
    let arrived = 0
    const all = new Promise<void>((resolve) =>
      device.socket.on('message', () => {
        if (++arrived === MAX_IN_FLIGHT) resolve()
      }),
    )
    const pending = Array.from({ length: MAX_IN_FLIGHT }, (_, i) => position('pnp-busy', `?n=${i}`))
    await all
    const refused = await position('pnp-busy', '?n=extra')
    expect(refused.statusCode).toBe(503)
    expect(refused.json()).toMatchObject({ success: false, error: 'server_busy' })
    expect(refused.headers['retry-after']).toBe('1')
    expect(device.requests.length).toBe(MAX_IN_FLIGHT)
    expect(await metric('fleetgate_device_requests_in_flight')).toBe(MAX_IN_FLIGHT)
    for (const frame of device.requests) device.respond(frame.id, 200, { n: frame.query.n })
    const answers = await Promise.all(pending)
    expect(await metric('fleetgate_device_requests_in_flight')).toBe(0)
    expect(answers.map((r) => r.json().data.n)).toEqual(Array.from({ length: MAX_IN_FLIGHT }, (_, i) => String(i)))
    // The answers freed the slots.
    device.handler = () => ({ status: 200, data: {} })
    expect((await position('pnp-busy', '?n=after')).statusCode).toBe(200)
    await device.close()
  }, 30_000)

  it('matches 100 concurrent requests over two devices to their answers, given out of order', async () => {
    const devices = await Promise.all(['pnp-corr-a', 'pnp-corr-b'].map((id) => RawDevice.link(gw.linkUrl, { device_id: id }, () => undefined)))
    const arrivedAll = devices.map(
      (device) =>
        new Promise<void>((resolve) => {
          const check = () => device.requests.length === 50 && resolve()
          device.socket.on('message', () => setImmediate(check))
        }),
    )
    const pending = Array.from({ length: 100 }, (_, i) => position(i % 2 ? 'pnp-corr-b' : 'pnp-corr-a', `?n=${i}`))
    await Promise.all(arrivedAll)
    for (const device of devices) {
      const shuffled = [...device.requests].sort(() => Math.random() - 0.5)
      for (const frame of shuffled) device.respond(frame.id, 200, { n: frame.query.n, device: device === devices[0] ? 'a' : 'b' })
    }
    const answers = await Promise.all(pending)
    answers.forEach((res, i) => {
      expect(res.statusCode).toBe(200)
      expect(res.json().data).toEqual({ n: String(i), device: i % 2 ? 'b' : 'a' })
    })
    await Promise.all(devices.map((d) => d.close()))
  })

  it('ignores and counts a response with an unknown id, and one sent on another link', async () => {
    const before = (await metric('fleetgate_device_unknown_responses_total')) ?? 0
    const a = await RawDevice.link(gw.linkUrl, { device_id: 'pnp-unknown-a' }, () => undefined)
    const b = await RawDevice.link(gw.linkUrl, { device_id: 'pnp-unknown-b' }, () => undefined)
    const arrived = a.nextRequest()
    const pending = position('pnp-unknown-a')
    const frame = await arrived
    b.respond(frame.id, 200, { from: 'b' })
    a.respond('no-such-id', 200, {})
    a.respond(frame.id, 200, { from: 'a' })
    expect((await pending).json().data).toEqual({ from: 'a' })
    await expect.poll(() => metric('fleetgate_device_unknown_responses_total')).toBe(before + 2)
    expect(a.socket.readyState).toBe(WebSocket.OPEN)
    expect(b.socket.readyState).toBe(WebSocket.OPEN)
    await Promise.all([a.close(), b.close()])
  })

  it('updates the last status and counters from heartbeats and requests', async () => {
    const device = await RawDevice.link(gw.linkUrl, { device_id: 'pnp-beat' })
    const connection = async () =>
      (await gw.app.inject({ method: 'GET', url: '/api/v1/devices/pnp-beat/connection', headers: { authorization: root } })).json()
    expect(await connection()).toMatchObject({ success: true, connected: true, alive: true, messages_sent: 0, messages_received: 0, last_heartbeat: null })
    device.heartbeat({ state: 'idle', temperature: 41.5 })
    await expect.poll(async () => (await connection()).messages_received).toBe(1)
    const status = await gw.app.inject({ method: 'GET', url: '/api/v1/devices/pnp-beat/status', headers: { authorization: root } })
    expect(status.json()).toEqual({ success: true, status: { state: 'idle', temperature: 41.5 } })
    expect((await position('pnp-beat')).statusCode).toBe(200)
    const after = await connection()
    expect(after).toMatchObject({ messages_sent: 1, messages_received: 2 })
    expect(after.last_heartbeat).toBeGreaterThan(after.connect_time - 1)
    await device.close()
  })

  it('shows a closed link as not connected, not registered and not alive, keeping its last status', async () => {
    const device = await RawDevice.link(gw.linkUrl, { device_id: 'pnp-gone' })
    device.heartbeat({ state: 'done' })
    await expect.poll(async () => (await gw.app.inject({ method: 'GET', url: '/api/v1/devices/pnp-gone/status', headers: { authorization: root } })).json().status).toEqual({ state: 'done' })
    await device.close()
    await expect
      .poll(async () => (await gw.app.inject({ method: 'GET', url: '/api/v1/devices/pnp-gone', headers: { authorization: root } })).json().device)
      .toMatchObject({ connected: false, registered: false, alive: false, messages_sent: 0, last_status: { state: 'done' } })
  })
})

describe.each(DIALECTS)('device time-outs and liveness on %s', (dialect) => {
  let gw: GatewayApp
  let root: string
  beforeAll(async () => {
    gw = await startGatewayApp(dialect, { DEVICE_REQUEST_TIMEOUT_MS: '200', DEVICE_ALIVE_SECONDS: '0.5' }, { deviceLink: { pingIntervalMs: 100 } })
    root = await gw.auth('root')
  })
  afterAll(() => gw.close())

  const get = (url: string) => gw.app.inject({ method: 'GET', url, headers: { authorization: root } })

  it('answers 504 device_timeout when a device stays silent, and ignores its late answer', async () => {
    const device = await RawDevice.link(gw.linkUrl, { device_id: 'pnp-silent' }, () => undefined)
    const res = await get('/api/v1/devices/pnp-silent/hardware/position')
    expect(res.statusCode).toBe(504)
    expect(res.json()).toMatchObject({ success: false, error: 'device_timeout' })
    device.respond(device.requests[0]!.id, 200, { late: true })
    device.handler = (frame) => ({ status: 200, data: { path: frame.path } })
    expect((await get('/api/v1/devices/pnp-silent/hardware/position')).json()).toEqual({ success: true, status: 200, data: { path: '/hardware/position' } })
    await device.close()
  })

  it('keeps serving other devices while one is silent', async () => {
    const silent = await RawDevice.link(gw.linkUrl, { device_id: 'pnp-slow' }, () => undefined)
    const quick = await RawDevice.link(gw.linkUrl, { device_id: 'pnp-quick' })
    const slow = get('/api/v1/devices/pnp-slow/hardware/position')
    const fast = await get('/api/v1/devices/pnp-quick/hardware/position')
    expect(fast.statusCode).toBe(200)
    expect((await slow).statusCode).toBe(504)
    await Promise.all([silent.close(), quick.close()])
  })

  it('reports a linked device without frames for DEVICE_ALIVE_SECONDS as not alive, and alive again after a frame', async () => {
    const device = await RawDevice.link(gw.linkUrl, { device_id: 'pnp-quiet' })
    const record = async () => (await get('/api/v1/devices/pnp-quiet')).json().device
    expect(await record()).toMatchObject({ alive: true })
    // Pongs keep arriving (ping every 100 ms) but do not count as frames.
    await expect.poll(record, { timeout: 5000 }).toMatchObject({ alive: false, connected: true, registered: true })
    const discover = (await get('/api/v1/devices/discover')).json().devices.map((d: { device_id: string }) => d.device_id)
    expect(discover).not.toContain('pnp-quiet')
    device.heartbeat({})
    await expect.poll(record).toMatchObject({ alive: true })
    await device.close()
  })

  it('closes a link that answers no ping twice in a row', async () => {
    const socket = new WebSocket(gw.linkUrl, { autoPong: false })
    const closed = new Promise<number>((resolve) => socket.on('close', (code) => resolve(code)))
    await new Promise((resolve) => socket.on('open', resolve))
    socket.send(JSON.stringify({ type: 'register', device_id: 'pnp-deaf', key: DEVICE_KEY, hostname: 'h', version: '1' }))
    expect(await closed).toBe(1006)
  })

  it('keeps a link that answers pings', async () => {
    const device = await RawDevice.link(gw.linkUrl, { device_id: 'pnp-pongs' })
    let pings = 0
    await new Promise<void>((resolve) => device.socket.on('ping', () => ++pings === 4 && resolve()))
    expect(device.socket.readyState).toBe(WebSocket.OPEN)
    await device.close()
  })
})
