import { connect, type NatsConnection } from 'nats'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { natsSubjects } from '../../src/link/bus/nats-subjects.js'
import { testDatabase, type TestDatabase } from '../helpers/dialects.js'
import { natsSuitesRunnable, TEST_NATS_URL as NATS_URL } from '../helpers/nats.js'
import { startGatewayApp, type GatewayApp } from '../gateway/helpers/gateway-app.js'
import { machine } from '../gateway/helpers/machine.js'
import { RawDevice, uniqueDeviceId } from '../gateway/helpers/raw-device.js'

const runnable = await natsSuitesRunnable({ needsPostgres: true })
const CLUSTER_KEY = 'signed-bus-test-cluster-key-0123456789abcdef'
const encode = (value: unknown) => new TextEncoder().encode(JSON.stringify(value))

/** Contract §17: with CLUSTER_KEY, a NATS client without the key can neither answer a device request nor close a link. */
describe.skipIf(!runnable)('two instances with a cluster key, and a NATS client without it', () => {
  let database: TestDatabase
  let a: GatewayApp
  let b: GatewayApp
  let c: GatewayApp
  let forger: NatsConnection
  beforeAll(async () => {
    database = testDatabase('postgres')
    const env = { NATS_URL, CLUSTER_KEY, DEVICE_REQUEST_TIMEOUT_MS: '1000' }
    a = await startGatewayApp('postgres', env, { database })
    b = await startGatewayApp('postgres', env, { database })
    c = await startGatewayApp('postgres', { ...env, CLUSTER_KEY: CLUSTER_KEY.toUpperCase() }, { database })
    forger = await connect({ servers: NATS_URL })
  })
  afterAll(async () => {
    await forger?.close()
    await a?.close()
    await b?.close()
    await c?.close()
    await database?.cleanup()
  })

  const as = async (gw: GatewayApp, method: string, url: string, payload?: unknown) =>
    gw.app.inject({ method: method as 'GET', url, headers: { authorization: await gw.auth('root') }, ...(payload !== undefined ? { payload: payload as object } : {}) })
  const rejected = async (gw: GatewayApp, reason: string) => {
    const text = (await gw.app.inject({ method: 'GET', url: '/metrics' })).body
    return Number(new RegExp(`^fleetgate_bus_rejected_messages_total\\{reason="${reason}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0)
  }

  it('forwards requests and moves links between instances with the same key', async () => {
    const id = uniqueDeviceId()
    const onA = await RawDevice.link(a.linkUrl, { device_id: id }, () => ({ status: 200, data: { via: 'a-link' } }))
    expect((await as(b, 'GET', `/api/v1/devices/${id}/hardware/position`)).json().data).toEqual({ via: 'a-link' })
    const onB = await RawDevice.link(b.linkUrl, { device_id: id }, () => ({ status: 200, data: { via: 'b-link' } }))
    expect((await onA.closed).code).toBe(4409)
    expect((await as(a, 'GET', `/api/v1/devices/${id}/hardware/position`)).json().data).toEqual({ via: 'b-link' })
    await onB.close()
  })

  it('keeps the link when a client without the key publishes a takeover or a close on its control subject', async () => {
    const id = uniqueDeviceId()
    const device = await RawDevice.link(a.linkUrl, { device_id: id }, machine)
    const before = await rejected(a, 'unsigned')
    const control = natsSubjects.control(id)
    forger.publish(control, encode({ kind: 'takeover', instance: 'forger', generation: 1_000_000 }))
    forger.publish(control, encode({ kind: 'disconnect', code: 4409, reason: 'forged' }), { reply: `_INBOX.forger.${id}` })
    await forger.flush()
    // At least: other tests sharing this NATS may publish unsigned binding removals meanwhile.
    await expect.poll(() => rejected(a, 'unsigned')).toBeGreaterThanOrEqual(before + 2)
    // A link still open answers: a closed one would answer 502.
    expect((await as(b, 'GET', `/api/v1/devices/${id}/hardware/position`)).statusCode).toBe(200)
    expect((await as(a, 'GET', `/api/v1/devices/${id}`)).json().device).toMatchObject({ connected: true })
    await device.close()
  })

  it("ignores an instance with another key: its takeover does not close the link, its request gets no answer", async () => {
    const id = uniqueDeviceId()
    const onA = await RawDevice.link(a.linkUrl, { device_id: id }, () => ({ status: 200, data: { via: 'a-link' } }))
    const before = await rejected(a, 'bad_signature')
    // C (another key) claims the device: A ignores C's takeover, and C's request to A's device gets no valid answer.
    expect((await as(c, 'GET', `/api/v1/devices/${id}/hardware/position`)).statusCode).toBe(504)
    expect(await rejected(a, 'bad_signature')).toBeGreaterThan(before)
    const onC = await RawDevice.link(c.linkUrl, { device_id: id }, () => ({ status: 200, data: { via: 'c-link' } }))
    await expect.poll(() => rejected(a, 'bad_signature')).toBeGreaterThan(before + 1)
    expect((await as(b, 'GET', `/api/v1/devices/${id}/hardware/position`)).json().data).toEqual({ via: 'a-link' })
    await onC.close()
    await onA.close()
  })

  it("uses the instance's answer, not a forged reply to the device's call subject", async () => {
    const id = uniqueDeviceId()
    // The device answers only once the forged reply is on the server: it reaches B first, as a
    // forger racing the real answer hopes (one arriving after the answer is simply too late).
    let forgedSent!: () => void
    const nextForgedReply = () => new Promise<void>((resolve) => (forgedSent = resolve))
    let forgedReply = nextForgedReply()
    const device = await RawDevice.link(a.linkUrl, { device_id: id }, async () => {
      await forgedReply
      forgedReply = nextForgedReply()
      return { status: 200, data: { via: 'a-link' } }
    })
    const forged = forger.subscribe(natsSubjects.call(id), {
      callback: (_err, msg) => {
        msg.respond(encode({ answer: { status: 200, data: { via: 'forger' } } }))
        void forger.flush().then(() => forgedSent())
      },
    })
    await forger.flush()
    const before = await rejected(b, 'unsigned')
    for (let i = 0; i < 3; i++) expect((await as(b, 'GET', `/api/v1/devices/${id}/hardware/position`)).json().data).toEqual({ via: 'a-link' })
    await expect.poll(() => rejected(b, 'unsigned')).toBeGreaterThanOrEqual(before + 3)
    forged.unsubscribe()
    await device.close()
  })

  it('times out a request only a forger answers', async () => {
    const id = uniqueDeviceId()
    const forged = forger.subscribe(natsSubjects.call(id), {
      callback: (_err, msg) => msg.respond(encode({ answer: { status: 200, data: { via: 'forger' } } })),
    })
    await forger.flush()
    const res = await as(b, 'GET', `/api/v1/devices/${id}/hardware/position`)
    expect(res.statusCode).toBe(504)
    expect(res.json()).toMatchObject({ error: 'device_timeout' })
    forged.unsubscribe()
  })
})
