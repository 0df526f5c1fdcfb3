import { randomUUID } from 'node:crypto'
import { connect, headers, type NatsConnection } from 'nats'
import { Registry } from 'prom-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { NatsRpc } from '../../src/link/bus/nats-rpc.js'
import { BusSigner, busRejectedCounter, signedConnection, SIGNATURE_HEADER, TIMESTAMP_HEADER } from '../../src/nats/bus-signature.js'
import { natsReachable, TEST_NATS_URL } from '../helpers/nats.js'

const KEY = 'k'.repeat(32)
const OTHER_KEY = 'o'.repeat(32)
const data = new TextEncoder().encode('{"x":1}')

describe('the bus signature', () => {
  const signer = new BusSigner(KEY)
  const msg = (subject: string, reply: string, h: ReturnType<typeof headers> | undefined, payload = data) => ({ subject, reply, headers: h, data: payload })

  it('accepts its own signature and refuses an unsigned, altered, re-addressed or stale message', () => {
    const signed = signer.sign('a.b', 'inbox.1', data)
    expect(signer.check(msg('a.b', 'inbox.1', signed))).toBeUndefined()
    expect(signer.check(msg('a.b', 'inbox.1', undefined))).toBe('unsigned')
    expect(signer.check(msg('a.b', 'inbox.1', signed, new TextEncoder().encode('{"x":2}')))).toBe('bad_signature')
    expect(signer.check(msg('a.c', 'inbox.1', signed))).toBe('bad_signature')
    expect(signer.check(msg('a.b', 'inbox.2', signed))).toBe('bad_signature')
    expect(new BusSigner(OTHER_KEY).check(msg('a.b', 'inbox.1', signed))).toBe('bad_signature')
    const old = new BusSigner(KEY, undefined, () => Date.now() - 31_000).sign('a.b', 'inbox.1', data)
    expect(signer.check(msg('a.b', 'inbox.1', old))).toBe('stale')
    const ahead = new BusSigner(KEY, undefined, () => Date.now() + 31_000).sign('a.b', 'inbox.1', data)
    expect(signer.check(msg('a.b', 'inbox.1', ahead))).toBe('stale')
    const forgedTs = headers()
    forgedTs.set(TIMESTAMP_HEADER, String(Date.now()))
    forgedTs.set(SIGNATURE_HEADER, old.get(SIGNATURE_HEADER))
    expect(signer.check(msg('a.b', 'inbox.1', forgedTs))).toBe('bad_signature')
  })

  it('refuses a key shorter than 32 bytes', () => {
    expect(() => new BusSigner('short')).toThrow(/32 bytes/)
  })
})

describe.skipIf(!(await natsReachable('the signed NATS connection test')))('a signed NATS connection', () => {
  let raw: NatsConnection[] = []
  const registry = new Registry()
  const rejected = busRejectedCounter(registry)
  const open = async (key?: string) => {
    const nc = await connect({ servers: TEST_NATS_URL })
    raw.push(nc)
    return { nc, signed: key ? signedConnection(nc, new BusSigner(key, rejected)) : nc }
  }
  const count = async (reason: string) => (await rejected.get()).values.find((v) => v.labels.reason === reason)?.value ?? 0
  let server: Awaited<ReturnType<typeof open>>
  let client: NatsRpc
  let subject: string
  const handled: unknown[] = []

  beforeAll(async () => {
    server = await open(KEY)
    client = new NatsRpc((await open(KEY)).signed)
    subject = `test.signed.${randomUUID()}`
    new NatsRpc(server.signed).serve(subject, async (value) => (handled.push(value), { from: 'instance' }), () => undefined)
    await server.nc.flush()
  })
  afterAll(async () => {
    client?.close()
    await Promise.all(raw.map((nc) => nc.close()))
    raw = []
  })

  it('carries requests and replies between connections with the same key, large ones too', async () => {
    await expect(client.request(subject, { n: 1 }, 2000)).resolves.toEqual({ from: 'instance' })
    const big = { blob: 'b'.repeat(3 * 1024 * 1024) }
    await expect(client.request(subject, big, 5000)).resolves.toEqual({ from: 'instance' })
    expect(handled.at(-1)).toEqual(big)
  })

  it('ignores a message published without the key, and one signed with another key, counting them', async () => {
    const before = { unsigned: await count('unsigned'), bad: await count('bad_signature') }
    const forger = await open()
    const other = await open(OTHER_KEY)
    handled.length = 0
    forger.nc.publish(subject, JSON.stringify({ forged: true }))
    new NatsRpc(other.signed).publish(subject, { other: true })
    await forger.nc.flush()
    await other.nc.flush()
    await expect(client.request(subject, { real: true }, 2000)).resolves.toEqual({ from: 'instance' })
    expect(handled).toEqual([{ real: true }])
    await expect.poll(() => count('unsigned')).toBeGreaterThanOrEqual(before.unsigned + 1)
    await expect.poll(() => count('bad_signature')).toBeGreaterThanOrEqual(before.bad + 1)
  })

  it('ignores a replayed signed message (old time-stamp)', async () => {
    const before = await count('stale')
    const forger = await open()
    handled.length = 0
    const payload = new TextEncoder().encode(JSON.stringify({ replayed: true }))
    const old = new BusSigner(KEY, undefined, () => Date.now() - 60_000)
    forger.nc.publish(subject, payload, { headers: old.sign(subject, undefined, payload) })
    await forger.nc.flush()
    await expect.poll(() => count('stale')).toBeGreaterThanOrEqual(before + 1)
    expect(handled).toEqual([])
  })

  it('skips a forged reply and takes the real one; times out when only a forger answers', async () => {
    const forger = await open()
    const contested = `test.contested.${randomUUID()}`
    forger.nc.subscribe(contested, { callback: (_err, m) => m.respond(new TextEncoder().encode(JSON.stringify({ from: 'forger' }))) })
    await forger.nc.flush()
    await expect(client.request(contested, {}, 500)).rejects.toMatchObject({ code: 'TIMEOUT' })
    const slow = await open(KEY)
    new NatsRpc(slow.signed).serve(contested, async () => (await new Promise((r) => setTimeout(r, 50)), { from: 'instance' }), () => undefined)
    await slow.nc.flush()
    await expect(client.request(contested, {}, 2000)).resolves.toEqual({ from: 'instance' })
  })

  it('still reports "no responders" at once', async () => {
    await expect(client.request(`test.nobody.${randomUUID()}`, {}, 2000)).rejects.toMatchObject({ code: '503' })
  })
})
