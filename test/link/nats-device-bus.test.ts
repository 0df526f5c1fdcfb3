import { connect, type NatsConnection } from 'nats'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { natsSubjects } from '../../src/link/bus/nats-subjects.js'
import { testDatabase, type TestDatabase } from '../helpers/dialects.js'
import { natsSuitesRunnable, TEST_NATS_URL as NATS_URL } from '../helpers/nats.js'
import { startGatewayApp, type GatewayApp } from '../gateway/helpers/gateway-app.js'
import { machine, OPERATOR } from '../gateway/helpers/machine.js'
import { RawDevice, uniqueDeviceId } from '../gateway/helpers/raw-device.js'

const runnable = await natsSuitesRunnable({ needsPostgres: true })

describe.skipIf(!runnable)('two instances sharing PostgreSQL and NATS', () => {
  let database: TestDatabase
  let a: GatewayApp
  let b: GatewayApp
  /** A bare NATS client: an instance from before the call subject, as the bus sees it. */
  let peer: NatsConnection
  beforeAll(async () => {
    database = testDatabase('postgres')
    const env = { NATS_URL, DEVICE_REQUEST_TIMEOUT_MS: '1500' }
    a = await startGatewayApp('postgres', env, { database })
    b = await startGatewayApp('postgres', env, { database })
    peer = await connect({ servers: NATS_URL })
  })
  afterAll(async () => {
    await peer?.close()
    await a?.close()
    await b?.close()
    await database?.cleanup()
  })

  const as = async (gw: GatewayApp, method: string, url: string, payload?: unknown, user = 'root') =>
    gw.app.inject({ method: method as 'GET', url, headers: { authorization: await gw.auth(user) }, ...(payload !== undefined ? { payload: payload as object } : {}) })

  it('forwards a request made on B to the device linked to A', async () => {
    const id = uniqueDeviceId()
    const device = await RawDevice.link(a.linkUrl, { device_id: id }, machine)
    const res = await as(b, 'POST', `/api/v1/devices/${id}/hardware/move?fast=1`, { x: 3, relative: true })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ success: true, status: 200, data: { path: '/hardware/move', user: 'root' } })
    expect(device.requests.at(-1)).toMatchObject({ method: 'POST', path: '/hardware/move', query: { fast: '1' }, body: { x: 3, relative: true }, user: { id: 'root', role: 'admin' } })
    await device.close()
  })

  it('shows the live fields of a device linked to A when B answers', async () => {
    const id = uniqueDeviceId()
    const device = await RawDevice.link(a.linkUrl, { device_id: id, hostname: 'on-a' })
    device.heartbeat({ state: 'idle' })
    await expect.poll(async () => (await as(b, 'GET', `/api/v1/devices/${id}/connection`)).json().messages_received).toBe(1)
    await as(b, 'GET', `/api/v1/devices/${id}/hardware/position`)
    const record = (await as(b, 'GET', `/api/v1/devices/${id}`)).json().device
    expect(record).toMatchObject({ hostname: 'on-a', connected: true, registered: true, alive: true, messages_sent: 1, messages_received: 2, last_status: { state: 'idle' } })
    expect((await as(b, 'GET', `/api/v1/devices/${id}`)).json().device).toEqual((await as(a, 'GET', `/api/v1/devices/${id}`)).json().device)
    const listed = (await as(b, 'GET', '/api/v1/devices')).json().devices.find((d: { device_id: string }) => d.device_id === id)
    expect(listed).toMatchObject({ connected: true, alive: true })
    const discovered = (await as(b, 'GET', '/api/v1/devices/discover')).json().devices.map((d: { device_id: string }) => d.device_id)
    expect(discovered).toContain(id)
    await device.close()
    await expect.poll(async () => (await as(b, 'GET', `/api/v1/devices/${id}`)).json().device.connected).toBe(false)
  })

  it('answers 502 for a device linked nowhere and 504 for a silent device on the other instance', async () => {
    const nowhere = await as(b, 'GET', `/api/v1/devices/${uniqueDeviceId()}/hardware/position`)
    expect(nowhere.statusCode).toBe(502)
    expect(nowhere.json()).toMatchObject({ error: 'device_unavailable' })
    const id = uniqueDeviceId()
    const silent = await RawDevice.link(a.linkUrl, { device_id: id }, () => undefined)
    const res = await as(b, 'GET', `/api/v1/devices/${id}/hardware/position`)
    expect(res.statusCode).toBe(504)
    expect(res.json()).toMatchObject({ error: 'device_timeout' })
    await silent.close()
  })

  it('fails a request pending on the other instance with 502 as soon as the link drops', async () => {
    const id = uniqueDeviceId()
    const device = await RawDevice.link(a.linkUrl, { device_id: id }, () => undefined)
    const arrived = device.nextRequest()
    const pending = as(b, 'GET', `/api/v1/devices/${id}/hardware/position`)
    await arrived
    device.socket.terminate()
    // 502, not the 504 of the time-out: the drop on A failed the request waiting on B.
    const res = await pending
    expect(res.statusCode).toBe(502)
  })

  it('moves the link when the device reconnects to B: A closes its link with 4409 and forwards to B', async () => {
    const id = uniqueDeviceId()
    const onA = await RawDevice.link(a.linkUrl, { device_id: id, hostname: 'first' }, () => ({ status: 200, data: { via: 'a-link' } }))
    const onB = await RawDevice.link(b.linkUrl, { device_id: id, hostname: 'second' }, () => ({ status: 200, data: { via: 'b-link' } }))
    expect((await onA.closed).code).toBe(4409)
    for (const gw of [a, b]) {
      const res = await as(gw, 'GET', `/api/v1/devices/${id}/hardware/position`)
      expect(res.json().data).toEqual({ via: 'b-link' })
      expect((await as(gw, 'GET', `/api/v1/devices/${id}`)).json().device).toMatchObject({ hostname: 'second', connected: true })
    }
    await onB.close()
  })

  it('carries bodies and answers larger than the NATS max_payload', async () => {
    const id = uniqueDeviceId()
    const big = 'x'.repeat(3 * 1024 * 1024)
    const device = await RawDevice.link(a.linkUrl, { device_id: id }, (frame) => ({ status: 200, data: { parsed: { size: (frame.body as { data: string }).data.length, echo: big } } }))
    const data = Buffer.alloc(2_000_000, 1).toString('base64')
    const res = await as(b, 'POST', `/api/v1/devices/${id}/orders/parse`, { filename: 'big.csv', encoding: 'base64', data })
    expect(res.statusCode).toBe(200)
    expect(res.json().parsed).toEqual({ size: data.length, echo: big })
    expect((device.requests.at(-1)!.body as { data: string }).data).toBe(data)
    await device.close()
  })

  it('binds on a device login made through B and forgets through B a device linked to A', async () => {
    const id = uniqueDeviceId()
    const device = await RawDevice.link(a.linkUrl, { device_id: id }, machine)
    expect((await as(b, 'POST', `/api/v1/devices/${id}/auth/login`, OPERATOR, 'alice')).statusCode).toBe(200)
    expect((await as(a, 'GET', `/api/v1/devices/${id}`, undefined, 'alice')).statusCode).toBe(200)
    expect((await as(b, 'DELETE', `/api/v1/admin/devices/${id}`)).statusCode).toBe(200)
    expect((await device.closed).code).toBe(4401)
    expect((await as(a, 'GET', `/api/v1/devices/${id}`)).statusCode).toBe(404)
  })

  const json = (value: unknown) => new TextEncoder().encode(typeof value === 'string' ? value : JSON.stringify(value))
  const parsed = (data: Uint8Array) => JSON.parse(new TextDecoder().decode(data)) as unknown
  const user = { id: 'root', username: 'root', role: 'admin' }

  it('answers an instance from before the call subject, which asks with JSON on the request subject', async () => {
    const id = uniqueDeviceId()
    const device = await RawDevice.link(a.linkUrl, { device_id: id }, machine)
    const call = { method: 'PUT', path: '/hardware/light', query: { on: '1' }, body: { level: 3 }, user }
    const reply = await peer.request(natsSubjects.request(id), json({ call, timeout_ms: 1500 }), { timeout: 3000 })
    expect(parsed(reply.data)).toEqual({ answer: { status: 200, data: { path: '/hardware/light', user: 'root' } } })
    expect(device.requests.at(-1)).toMatchObject(call)
    await device.close()
  })

  it('asks a holding instance from before the call subject the old way when it answers the call with null', async () => {
    const id = uniqueDeviceId()
    const asked: { subject: string; message: unknown }[] = []
    const oldHolder = peer.subscribe(natsSubjects.device(id), {
      callback: (_err, msg) => {
        asked.push({ subject: msg.subject, message: parsed(msg.data) })
        msg.respond(json(msg.subject === natsSubjects.request(id) ? { answer: { status: 200, data: { via: 'old holder' } } } : null))
      },
    })
    await peer.flush()
    const res = await as(b, 'GET', `/api/v1/devices/${id}/hardware/position?unit=mm`)
    expect(res.statusCode).toBe(200)
    expect(res.json().data).toEqual({ via: 'old holder' })
    const call = { method: 'GET', path: '/hardware/position', query: { unit: 'mm' }, body: null, user: { id: 'root', role: 'admin' } }
    expect(asked.map((a) => a.subject)).toEqual([natsSubjects.call(id), natsSubjects.request(id)])
    expect(asked[0]!.message).toMatchObject({ timeout_ms: 1500, ...call })
    expect(asked[1]!.message).toMatchObject({ timeout_ms: 1500, call })
    oldHolder.unsubscribe()
  })

  it('answers a malformed call with device_unavailable and sends the device nothing', async () => {
    const id = uniqueDeviceId()
    const device = await RawDevice.link(a.linkUrl, { device_id: id }, machine)
    for (const text of ['{"timeout_ms":"soon","method":"GET"}', 'not json', '{"call":{}}']) {
      const reply = await peer.request(natsSubjects.call(id), json(text), { timeout: 3000 })
      expect(parsed(reply.data)).toEqual({ error: 'device_unavailable', message: `Malformed call for device ${id} from another instance` })
    }
    expect((await as(b, 'GET', `/api/v1/devices/${id}/hardware/position`)).statusCode).toBe(200)
    expect(device.requests).toHaveLength(1)
    await device.close()
  })

  it('reports NATS in /readyz', async () => {
    for (const gw of [a, b]) expect((await gw.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200)
  })
})

describe.skipIf(!runnable)('NATS at start', () => {
  it('refuses to start with an unreachable NATS_URL, naming the variable', async () => {
    await expect(startGatewayApp('postgres', { NATS_URL: 'nats://127.0.0.1:1' })).rejects.toThrow(/NATS_URL/)
  })
})
