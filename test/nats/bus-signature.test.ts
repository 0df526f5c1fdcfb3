import { randomUUID } from 'node:crypto'
import { connect, headers, type NatsConnection } from 'nats'
import { Registry } from 'prom-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { NatsRpc } from '../../src/link/bus/nats-rpc.js'
import { BusSigner, busRejectedCounter, MESSAGE_ID_HEADER, signedConnection, SIGNATURE_HEADER, TIMESTAMP_HEADER } from '../../src/nats/bus-signature.js'
import { REPLAY_WINDOW, ReplayGuard } from '../../src/nats/replay-guard.js'
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
    forgedTs.set(MESSAGE_ID_HEADER, old.get(MESSAGE_ID_HEADER))
    forgedTs.set(SIGNATURE_HEADER, old.get(SIGNATURE_HEADER))
    expect(signer.check(msg('a.b', 'inbox.1', forgedTs))).toBe('bad_signature')
    // The message id is signed: another one (to pass the replay guard) breaks the signature.
    const forgedId = headers()
    forgedId.set(TIMESTAMP_HEADER, signed.get(TIMESTAMP_HEADER))
    forgedId.set(MESSAGE_ID_HEADER, `${signed.get(MESSAGE_ID_HEADER)}0`)
    forgedId.set(SIGNATURE_HEADER, signed.get(SIGNATURE_HEADER))
    expect(signer.check(msg('a.b', 'inbox.1', forgedId))).toBe('bad_signature')
    const noId = headers()
    noId.set(TIMESTAMP_HEADER, signed.get(TIMESTAMP_HEADER))
    noId.set(SIGNATURE_HEADER, signed.get(SIGNATURE_HEADER))
    expect(signer.check(msg('a.b', 'inbox.1', noId))).toBe('unsigned')
  })

  it('refuses a copy of a message a subscription already accepted within the window; each new message (a retry too) passes', () => {
    const guard = signer.replayGuard()
    const first = signer.sign('a.b', 'inbox.1', data)
    expect(signer.check(msg('a.b', 'inbox.1', first), guard)).toBeUndefined()
    expect(signer.check(msg('a.b', 'inbox.1', first), guard)).toBe('replayed')
    // The same request sent again is signed again: a new id.
    expect(signer.check(msg('a.b', 'inbox.1', signer.sign('a.b', 'inbox.1', data)), guard)).toBeUndefined()
    // Another subscription has its own guard: it hears the message once too.
    expect(signer.check(msg('a.b', 'inbox.1', first), signer.replayGuard())).toBeUndefined()
    // A bad signature takes no place in the guard.
    const other = new BusSigner(KEY)
    const valid = other.sign('a.b', '', data)
    const tampered = msg('a.b', '', valid, new TextEncoder().encode('{"x":3}'))
    expect(signer.check(tampered, guard)).toBe('bad_signature')
    expect(signer.check(msg('a.b', '', valid), guard)).toBeUndefined()
  })

  it('keeps a sliding window per sender: out of order within it passes once, older is refused, silent senders are forgotten', () => {
    let now = 0
    const guard = new ReplayGuard(60_000, () => now)
    expect(guard.fresh('s1.a')).toBe(true) // 10
    expect(guard.fresh('s1.5')).toBe(true)
    expect(guard.fresh('s1.5')).toBe(false)
    expect(guard.fresh('s1.7')).toBe(true)
    expect(guard.fresh('s1.a')).toBe(false)
    const top = 10 + REPLAY_WINDOW + 5
    expect(guard.fresh(`s1.${top.toString(36)}`)).toBe(true)
    expect(guard.fresh(`s1.${(top - REPLAY_WINDOW + 1).toString(36)}`)).toBe(true)
    expect(guard.fresh(`s1.${(top - REPLAY_WINDOW).toString(36)}`)).toBe(false)
    expect(guard.fresh('s2.1')).toBe(true)
    for (const bad of ['', 'nodot', '.1', 's1.', 's1.0', 's1.-1', 's1.zzzzzzzzzzzzzz']) expect(guard.fresh(bad), bad).toBe(false)
    expect(guard.size).toBe(2)
    now = 60_001
    expect(guard.fresh('s3.1')).toBe(true)
    expect(guard.size).toBe(1)
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

  it('ignores a captured signed message replayed within the time window, counting it; retried requests still work', async () => {
    const before = await count('replayed')
    const spy = await open()
    const forger = await open()
    const captured: { data: Uint8Array; headers: ReturnType<typeof headers>; reply: string | undefined }[] = []
    spy.nc.subscribe(subject, { callback: (_err, m) => captured.push({ data: m.data, headers: m.headers!, reply: m.reply }) })
    await spy.nc.flush()
    handled.length = 0
    await expect(client.request(subject, { once: true }, 2000)).resolves.toEqual({ from: 'instance' })
    await expect(client.request(subject, { once: true }, 2000)).resolves.toEqual({ from: 'instance' })
    expect(handled).toEqual([{ once: true }, { once: true }])
    await expect.poll(() => captured.length).toBeGreaterThanOrEqual(1)
    const copy = captured[0]!
    const replayHeaders = headers()
    for (const name of [TIMESTAMP_HEADER, MESSAGE_ID_HEADER, SIGNATURE_HEADER]) replayHeaders.set(name, copy.headers.get(name))
    // Byte for byte, reply subject included (it is signed): within the window, only the guard can tell.
    forger.nc.publish(subject, copy.data, { headers: replayHeaders, ...(copy.reply ? { reply: copy.reply } : {}) })
    await forger.nc.flush()
    await expect.poll(() => count('replayed')).toBe(before + 1)
    expect(handled).toEqual([{ once: true }, { once: true }])
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
