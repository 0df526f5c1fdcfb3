import { once } from 'node:events'
import net from 'node:net'
import { SignJWT } from 'jose'
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest'
import { InProcessEventBus } from '../../src/events/in-process-event-bus.js'
import type { FleetEvent } from '../../src/fleet-event.js'
import { DIALECTS } from '../helpers/dialects.js'
import { CONSOLE, JWT_SECRET, startEventsApp, type EventsApp } from './events-kit.js'
import { SseClient } from './sse-client.js'

describe.each(DIALECTS)('the event stream on %s', (dialect) => {
  let t: EventsApp
  const bus = new InProcessEventBus<FleetEvent>()
  beforeAll(async () => {
    t = await startEventsApp(dialect, {}, { eventBus: bus, events: { maxBufferedBytes: 16 * 1024 } })
  })
  afterAll(() => t?.close())

  const addPlatformDevice = (device_id: string) =>
    t.app.inject({ method: 'POST', url: '/api/admin/device/add', headers: CONSOLE, payload: { device_id, model: 'm' } })

  it('answers 401 with the error body without a token, with a bad one or with a token in the query', async () => {
    for (const [url, auth] of [
      [`${t.url}/api/v1/events`, undefined],
      [`${t.url}/api/v1/events`, 'Bearer not.a.token'],
      [`${t.url}/api/v1/events?token=${(await t.auth('root')).slice(7)}`, undefined],
    ] as const) {
      const res = await SseClient.open(url, auth)
      expect(res.status).toBe(401)
      expect(JSON.parse(res.body)).toMatchObject({ success: false, error: 'unauthorized' })
    }
  })

  it('starts with retry: 3000, then numbers each event with an increasing id and a one-line JSON data', async () => {
    const s = await t.stream('root')
    expect(s.headers['content-type']).toMatch(/^text\/event-stream/)
    expect(s.headers['cache-control']).toContain('no-cache')
    await addPlatformDevice('ids-1')
    await addPlatformDevice('ids-2')
    await s.next('platform-device', (d) => d.device_id === 'ids-2')
    expect(s.lines[0]).toBe('retry: 3000')
    const ids = s.events.map((e) => e.id)
    expect(ids.length).toBeGreaterThanOrEqual(2)
    expect(ids).toEqual([...ids].sort((a, b) => a - b))
    expect(new Set(ids).size).toBe(ids.length)
    expect(s.of('platform-device', (d) => d.device_id === 'ids-1')[0]!.data).toMatchObject({ device_id: 'ids-1', online: false, last_online_at: null, reason: 'added' })
  })

  it('does not open a stream for HEAD', async () => {
    const res = await t.app.inject({ method: 'HEAD', url: '/api/v1/events', headers: { authorization: await t.auth('root') } })
    expect(res.statusCode).toBe(404)
  })

  it('sends a keep-alive comment periodically', async () => {
    const s = await t.stream('alice')
    expect(await s.nextComment()).toBe('keep-alive')
  })

  it('limits device events to the ?device_id= filter (repeatable) and refuses a malformed id with 400', async () => {
    const s = await t.stream('root', '?device_id=flt-a&device_id=flt-c')
    for (const id of ['flt-b', 'flt-a', 'flt-c']) await addPlatformDevice(id)
    await s.next('platform-device', (d) => d.device_id === 'flt-c')
    expect(s.of('platform-device').map((e) => e.data.device_id)).toEqual(['flt-a', 'flt-c'])

    for (const bad of ['..', 'a%2Fb', 'x'.repeat(65), 'sp%20ace']) {
      const res = await SseClient.open(`${t.url}/api/v1/events?device_id=${bad}`, await t.auth('root'))
      expect(res.status, bad).toBe(400)
      expect(JSON.parse(res.body)).toMatchObject({ success: false, error: 'bad_request' })
    }
  })

  it('allows 10 open streams per user: the 11th gets 429 with Retry-After, and a closed one frees its slot', async () => {
    const streams = []
    for (let i = 0; i < 10; i++) streams.push(await SseClient.open(`${t.url}/api/v1/events`, await t.auth('bob')))
    expect(streams.map((s) => s.status)).toEqual(Array(10).fill(200))
    const refused = await SseClient.open(`${t.url}/api/v1/events`, await t.auth('bob'))
    expect(refused.status).toBe(429)
    expect(refused.headers['retry-after']).toMatch(/^[0-9]+$/)
    expect(JSON.parse(refused.body)).toMatchObject({ success: false, error: 'rate_limited' })
    // Another user is not affected.
    expect((await t.stream('alice')).status).toBe(200)

    streams[0]!.close()
    await expect.poll(async () => {
      const again = await SseClient.open(`${t.url}/api/v1/events`, await t.auth('bob'))
      if (again.status === 200) streams.push(again)
      return again.status
    }).toBe(200)
    for (const s of streams) s.close()
  })

  it('ends the stream when the token expires', async () => {
    // Valid now only thanks to the 60 s of clock skew allowed, so it expires 1.5–2.5 s from now
    // (`exp` is in whole seconds: `now - 59` left between 0 and 1 s, and a loaded machine's
    // request sometimes arrived after it).
    const now = Math.floor(Date.now() / 1000)
    const expires = Math.ceil((Date.now() + 1500) / 1000) - 60
    const token = await new SignJWT({ username: 'alice', role: 'user', sid: 'expiring-session', auth_time: now - 120 })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('alice')
      .setIssuer('fleetgate')
      .setIssuedAt(now - 120)
      .setExpirationTime(expires)
      .sign(new TextEncoder().encode(JWT_SECRET))
    const s = await SseClient.open(`${t.url}/api/v1/events`, `Bearer ${token}`)
    expect(s.status).toBe(200)
    expect(await s.ended).toBe('finished')
    expect(s.comments).toContain('token expired')
  })

  it('drops a stream whose client stops reading, so memory stays bounded', async () => {
    // An app of its own: the streams other tests left open here read in this same process, and on a
    // loaded machine they could fall behind the pace below and be dropped too.
    const ownBus = new InProcessEventBus<FleetEvent>()
    const own = await startEventsApp(dialect, {}, { eventBus: ownBus, events: { maxBufferedBytes: 16 * 1024 } })
    onTestFinished(() => own.close())
    const metric = async (name: string) => {
      const text = (await own.app.inject('/metrics')).body
      const line = text.split('\n').find((l) => l.startsWith(name))
      return line ? Number(line.split(' ').pop()) : 0
    }
    const slow = 'fleetgate_event_streams_ended_total{reason="slow_consumer"}'
    const before = await metric(slow)
    const socket = net.connect((own.app.server.address() as net.AddressInfo).port, '127.0.0.1')
    socket.pause()
    socket.write(`GET /api/v1/events HTTP/1.1\r\nHost: x\r\nAuthorization: ${await own.auth('root')}\r\n\r\n`)
    socket.on('error', () => undefined)
    await expect.poll(() => metric('fleetgate_event_streams ')).toBeGreaterThan(0)
    // Before each look at the metric, 20 more statuses of 60 kB: the server drops the reader that never reads.
    const status = { blob: 'x'.repeat(60_000) }
    const publishThenRead = () => {
      for (let i = 0; i < 20; i++) ownBus.publish({ kind: 'device-status', data: { device_id: 'slow', status, at: Date.now() / 1000 } })
      return metric(slow)
    }
    await expect.poll(publishThenRead, { timeout: 10_000, interval: 1 }).toBe(before + 1)
    expect(await metric('fleetgate_event_streams ')).toBe(0)
    // Its connection is gone: what reached it before is read, then it ends.
    const closed = once(socket, 'close')
    socket.resume()
    await closed
  })

  it('finishes open streams (their last chunk sent, not a cut connection) when the server shuts down', async () => {
    const own = await startEventsApp(dialect)
    // Opened here rather than with own.stream(): own.close() would cut the streams it opened itself first.
    const s = await SseClient.open(`${own.url}/api/v1/events`, await own.auth('root'))
    expect(s.status).toBe(200)
    await own.close()
    expect(await s.ended).toBe('finished')
  })

  it('is listed in /openapi.json as text/event-stream with its filter parameter', async () => {
    const doc = (await t.app.inject('/openapi.json')).json()
    const op = doc.paths['/api/v1/events'].get
    expect(Object.keys(op.responses['200'].content)).toEqual(['text/event-stream'])
    expect(op.parameters.map((p: { name: string }) => p.name)).toContain('device_id')
    expect(op.security).toEqual([{ bearer: [] }])
  })
})
