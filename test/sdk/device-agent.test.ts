import { once } from 'node:events'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { DeviceAgent, DeviceAgentError, ok, RouteTable, type DeviceAgentOptions, type DisconnectInfo } from '@fleetgate/device-agent'
import { FakeGateway } from './fake-gateway.js'

const KEY = 'device-secret-0123456789'

/** Unlike events.once, does not reject when the agent emits 'error' first. */
const nextEvent = <T>(emitter: DeviceAgent, name: 'stopped' | 'disconnected') =>
  new Promise<T>((resolve) => emitter.once(name, (value: unknown) => resolve(value as T)))

describe('device agent', () => {
  let gateway: FakeGateway
  let agent: DeviceAgent | undefined

  beforeEach(async () => {
    gateway = await FakeGateway.start()
  })
  afterEach(async () => {
    vi.useRealTimers()
    await agent?.close()
    agent = undefined
    await gateway.close()
  })

  const startAgent = (options: Partial<DeviceAgentOptions> = {}) => {
    agent = new DeviceAgent({ url: gateway.url, deviceId: 'pnp-01', key: KEY, hostname: 'pnp-01', version: '2.3.1', routes: new RouteTable(), ...options })
    return agent.start()
  }

  it('sends the register frame of contract §4 and reports registered', async () => {
    const a = startAgent({ ip: '192.168.1.20', enrollToken: 'enroll-me' })
    const registered = once(a, 'registered')
    const link = await gateway.nextLink()
    const register = await link.acceptRegistration()
    expect(register).toEqual({ type: 'register', device_id: 'pnp-01', key: KEY, hostname: 'pnp-01', version: '2.3.1', ip: '192.168.1.20', enroll_token: 'enroll-me' })
    const [frame] = await registered
    expect(frame).toMatchObject({ type: 'registered', device_id: 'pnp-01' })
    expect(a.state).toBe('registered')
  })

  it('refuses options that would make an invalid register frame or a heartbeat slower than 20 s', () => {
    const base = { url: 'http://h', deviceId: 'pnp-01', key: KEY, version: '1', routes: new RouteTable() }
    expect(() => new DeviceAgent({ ...base, key: 'short' })).toThrow(/key/)
    expect(() => new DeviceAgent({ ...base, deviceId: '../x' })).toThrow(/device_id/)
    expect(() => new DeviceAgent({ ...base, heartbeatSeconds: 20 })).toThrow(/heartbeatSeconds/)
    expect(() => new DeviceAgent({ ...base, heartbeatSeconds: 0 })).toThrow(/heartbeatSeconds/)
  })

  it('sends heartbeats carrying the status provider object, at once and then periodically', async () => {
    let calls = 0
    startAgent({ heartbeatSeconds: 0.02, status: async () => ({ state: 'idle', beat: ++calls }) })
    const link = await gateway.nextLink()
    await link.acceptRegistration()
    expect(await link.nextFrame('heartbeat')).toEqual({ type: 'heartbeat', status: { state: 'idle', beat: 1 } })
    expect(await link.nextFrame('heartbeat')).toEqual({ type: 'heartbeat', status: { state: 'idle', beat: 2 } })
  })

  it('still heartbeats when the status provider throws', async () => {
    startAgent({
      status: () => {
        throw new Error('sensor bus down')
      },
    })
    const link = await gateway.nextLink()
    await link.acceptRegistration()
    expect(await link.nextFrame('heartbeat')).toEqual({ type: 'heartbeat', status: { error: 'status_unavailable' } })
  })

  it('answers each request with its own id while several are in flight, out of order', async () => {
    let releaseSlow!: () => void
    const slowGate = new Promise<void>((resolve) => (releaseSlow = resolve))
    const routes = new RouteTable()
      .get('/slow', async () => {
        await slowGate
        return ok({ slow: true })
      })
      .get('/orders/:oid', ({ params, query, user }) => ok({ oid: params.oid, query, user: user.username }))
      .post('/echo', ({ body }) => ({ status: 201, data: body }))
    const a = startAgent({ routes })
    const seen: string[] = []
    a.on('request', (frame) => seen.push(frame.id))
    const link = await gateway.nextLink()
    await link.acceptRegistration()

    link.request('r1', 'GET', '/slow')
    link.request('r2', 'GET', '/orders/ord-7', null, { verbose: '1' })
    link.request('r3', 'POST', '/echo', { name: 'board' })
    expect(await link.response('r2')).toEqual({ type: 'response', id: 'r2', status: 200, data: { oid: 'ord-7', query: { verbose: '1' }, user: 'admin' } })
    expect(await link.response('r3')).toEqual({ type: 'response', id: 'r3', status: 201, data: { name: 'board' } })
    releaseSlow()
    expect(await link.response('r1')).toEqual({ type: 'response', id: 'r1', status: 200, data: { slow: true } })
    expect(seen).toEqual(['r1', 'r2', 'r3'])
  })

  it('answers 404 for an unknown path and 500 for a throwing handler, and keeps serving', async () => {
    const routes = new RouteTable()
      .get('/boom', () => {
        throw new Error('stepper stalled')
      })
      .get('/fine', () => ok({ fine: true }))
    startAgent({ routes })
    const link = await gateway.nextLink()
    await link.acceptRegistration()
    link.request('a', 'GET', '/nowhere')
    link.request('b', 'GET', '/boom')
    link.request('c', 'GET', '/fine')
    expect(await link.response('a')).toMatchObject({ status: 404, data: { error: 'not_found' } })
    expect(await link.response('b')).toMatchObject({ status: 500, data: { error: 'internal', message: 'stepper stalled' } })
    expect(await link.response('c')).toMatchObject({ status: 200, data: { fine: true } })
  })

  it('answers 400 to a malformed request that still carries an id, instead of leaving the gateway to time out', async () => {
    startAgent()
    const link = await gateway.nextLink()
    await link.acceptRegistration()
    link.send({ type: 'request', id: 'bad-1', method: 'BREW', path: '/coffee', query: {}, body: null, user: { id: 'u', username: 'u', role: 'user' } })
    expect(await link.response('bad-1')).toMatchObject({ status: 400, data: { error: 'bad_request' } })
  })

  it('runs at most maxConcurrentRequests handlers at once and queues the rest', async () => {
    let active = 0
    let peak = 0
    const gates: (() => void)[] = []
    let started!: () => void
    let twoStarted = new Promise<void>((resolve) => (started = resolve))
    const routes = new RouteTable().get('/work', async () => {
      active++
      peak = Math.max(peak, active)
      if (active === 2) started()
      await new Promise<void>((resolve) => gates.push(resolve))
      active--
      return ok({})
    })
    startAgent({ routes, maxConcurrentRequests: 2 })
    const link = await gateway.nextLink()
    await link.acceptRegistration()
    for (const id of ['w1', 'w2', 'w3', 'w4']) link.request(id, 'GET', '/work')
    await twoStarted
    expect(gates).toHaveLength(2)
    twoStarted = new Promise<void>((resolve) => (started = resolve))
    gates.shift()!()
    gates.shift()!()
    await Promise.all([link.response('w1'), link.response('w2')])
    await twoStarted
    gates.shift()!()
    gates.shift()!()
    await Promise.all([link.response('w3'), link.response('w4')])
    expect(peak).toBe(2)
  })

  /** The agent's timers are faked: a close is awaited as an event, then its reconnect delay is stepped over. */
  const fakeTimers = () => vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
  const stepOver = async (disconnected: Promise<DisconnectInfo>) => {
    const { reconnectInMs } = await disconnected
    await vi.advanceTimersByTimeAsync(reconnectInMs ?? 0)
  }

  it('reconnects with exponential back-off after drops, and starts over only after a link stayed up for stableLinkMs', async () => {
    fakeTimers()
    const a = startAgent({ backoff: { baseMs: 10, capMs: 40, random: () => 0.999 }, stableLinkMs: 150 })
    const delays: (number | null)[] = []
    a.on('disconnected', (info: DisconnectInfo) => delays.push(info.reconnectInMs))
    const drop = async (close: (link: Awaited<ReturnType<FakeGateway['nextLink']>>) => void, link: Awaited<ReturnType<FakeGateway['nextLink']>>) => {
      const disconnected = nextEvent<DisconnectInfo>(a, 'disconnected')
      const next = gateway.nextLink()
      close(link)
      await stepOver(disconnected)
      return next
    }

    let link = await gateway.nextLink()
    await link.acceptRegistration()
    link = await drop((l) => l.ws.terminate(), link) // dropped right after the first registration: back-off at the base
    for (let i = 0; i < 4; i++) {
      await link.nextFrame('register')
      link = await drop((l) => l.ws.close(1011, 'overloaded'), link) // refused before registration: back-off grows
    }
    await link.acceptRegistration()
    link = await drop((l) => l.ws.close(1011, 'overloaded'), link) // registered, but dropped within the stable window: back-off not reset
    const registered = once(a, 'registered')
    await link.acceptRegistration()
    await registered
    await vi.advanceTimersByTimeAsync(150) // the link stays up for stableLinkMs
    link = await drop((l) => l.ws.terminate(), link) // dropped after a stable link: back-off starts over
    await link.acceptRegistration()

    expect(delays).toEqual([9, 19, 39, 39, 39, 39, 9])
    expect(gateway.links).toHaveLength(8)
  })

  it('waits at least the back-off base before linking again after a 4400, however the jitter falls', async () => {
    fakeTimers()
    const a = startAgent({ backoff: { baseMs: 150, capMs: 150, random: () => 0 } })
    const link = await gateway.nextLink()
    await link.acceptRegistration()
    await link.nextFrame('heartbeat')
    const disconnected = nextEvent<DisconnectInfo>(a, 'disconnected')
    link.ws.close(4400, 'heartbeat status over 65536 bytes of JSON')
    expect(await disconnected).toEqual({ code: 4400, reason: 'heartbeat status over 65536 bytes of JSON', reconnectInMs: 150 })
    await vi.advanceTimersByTimeAsync(149)
    expect(gateway.links).toHaveLength(1)
    const next = gateway.nextLink()
    await vi.advanceTimersByTimeAsync(1)
    await (await next).nextFrame('register')
    expect(a.state).not.toBe('stopped')
  })

  it('does not loop on a refused heartbeat: 4400 after each registration keeps growing the back-off', async () => {
    const a = startAgent({ backoff: { baseMs: 10, capMs: 1000, random: () => 0.999 } })
    const delays: (number | null)[] = []
    a.on('disconnected', (info: DisconnectInfo) => delays.push(info.reconnectInMs))
    for (let i = 0; i < 4; i++) {
      const link = await gateway.nextLink()
      await link.acceptRegistration()
      await link.nextFrame('heartbeat')
      link.ws.close(4400, 'refused')
    }
    await gateway.nextLink()
    expect(delays).toEqual([10, 19, 39, 79])
  })

  it('re-links after a gateway restart (1012) within restartDelayMaxMs, not after the back-off', async () => {
    const a = startAgent({ backoff: { baseMs: 60_000, capMs: 60_000, random: () => 0.999 }, restartDelayMaxMs: 50 })
    const delays: (number | null)[] = []
    a.on('disconnected', (info: DisconnectInfo) => delays.push(info.reconnectInMs))
    for (let i = 0; i < 3; i++) {
      const link = await gateway.nextLink()
      await link.acceptRegistration()
      link.ws.close(1012, 'server restarting')
    }
    const closedAt = Date.now()
    const link = await gateway.nextLink()
    await link.acceptRegistration()
    expect(Date.now() - closedAt).toBeLessThan(1000)
    expect(delays).toEqual([50, 50, 50])
  })

  it('picks the restart delay at random in [0, 2 s] by default', async () => {
    const a = startAgent({ backoff: { baseMs: 60_000, capMs: 60_000, random: () => 0.5 } })
    const link = await gateway.nextLink()
    await link.acceptRegistration()
    const disconnected = nextEvent<DisconnectInfo>(a, 'disconnected')
    link.ws.close(1012, 'server restarting')
    expect((await disconnected).reconnectInMs).toBe(1000)
  })

  it('does not send a heartbeat status over 64 KiB of JSON: reports it and keeps the link', async () => {
    let big = true
    const a = startAgent({ heartbeatSeconds: 0.05, status: () => (big ? { notes: 'n'.repeat(64 * 1024) } : { notes: 'short' }) })
    const errors: DeviceAgentError[] = []
    a.on('error', (err) => errors.push(err))
    const link = await gateway.nextLink()
    await link.acceptRegistration()
    const beat = await link.nextFrame('heartbeat')
    expect(beat).toEqual({ type: 'heartbeat', status: { error: 'status_too_large', bytes: 64 * 1024 + 12 } })
    expect(errors[0]).toBeInstanceOf(DeviceAgentError)
    expect(errors[0]).toMatchObject({ reason: 'status_too_large', closeCode: null })
    big = false
    await expect.poll(async () => (await link.nextFrame('heartbeat')).status).toEqual({ notes: 'short' })
    expect(link.received.every((f) => JSON.stringify(f).length < 1024)).toBe(true)
    expect(a.state).toBe('registered')
    expect(gateway.links).toHaveLength(1)
  })

  it('does not crash on an oversize heartbeat status when nobody listens for errors', async () => {
    const a = startAgent({ status: () => ({ notes: 'n'.repeat(65 * 1024) }) })
    const link = await gateway.nextLink()
    await link.acceptRegistration()
    expect(await link.nextFrame('heartbeat')).toMatchObject({ status: { error: 'status_too_large' } })
    expect(a.state).toBe('registered')
  })

  it('after 4401 reports the error and links again after at least its back-off (contract §4), without resetting it', async () => {
    const a = startAgent({ backoff: { baseMs: 40, capMs: 40, random: () => 0 } })
    const link = await gateway.nextLink()
    await link.nextFrame('register')
    const disconnected = nextEvent<DisconnectInfo>(a, 'disconnected')
    const error = once(a, 'error')
    link.ws.close(4401, 'bad key')
    const [err] = await error
    expect(err).toBeInstanceOf(DeviceAgentError)
    expect(err).toMatchObject({ reason: 'unauthorized', closeCode: 4401 })
    // Never sooner than the back-off's base, even with a jitter of 0.
    expect(await disconnected).toEqual({ code: 4401, reason: 'bad key', reconnectInMs: 40 })
    expect(a.state).toBe('waiting')
    const again = await gateway.nextLink()
    expect(await again.nextFrame('register')).toMatchObject({ device_id: a.deviceId })
    expect(gateway.links).toHaveLength(2)
  })

  it('after 4409 (replaced by another connection) reports it and links again after its back-off', async () => {
    const a = startAgent({ backoff: { baseMs: 5, capMs: 5 } })
    const link = await gateway.nextLink()
    await link.acceptRegistration()
    const error = once(a, 'error')
    link.ws.close(4409, 'replaced')
    expect((await error)[0]).toMatchObject({ reason: 'replaced', closeCode: 4409 })
    const again = await gateway.nextLink()
    const registered = once(a, 'registered')
    await again.acceptRegistration()
    await registered
    expect(a.state).toBe('registered')
  })

  it('with stopOnRefusal stops for good after 4401 or 4409', async () => {
    const a = startAgent({ stopOnRefusal: true, backoff: { baseMs: 1, capMs: 1 } })
    const link = await gateway.nextLink()
    await link.nextFrame('register')
    const disconnected = nextEvent(a, 'disconnected')
    const stopped = nextEvent(a, 'stopped')
    link.ws.close(4409, 'replaced')
    expect(await disconnected).toEqual({ code: 4409, reason: 'replaced', reconnectInMs: null })
    expect(await stopped).toEqual({ reason: 'replaced' })
    expect(a.state).toBe('stopped')
    expect(gateway.links).toHaveLength(1)
  })

  it('does not crash on a refusal when nobody listens for errors', async () => {
    const a = startAgent({ backoff: { baseMs: 5, capMs: 5 } })
    const link = await gateway.nextLink()
    await link.nextFrame('register')
    link.ws.close(4401, 'bad key')
    await gateway.nextLink()
    expect(a.state).not.toBe('stopped')
  })

  it('relink() closes the link with 1000 and links again at once, whatever the back-off', async () => {
    const a = startAgent({ backoff: { baseMs: 60_000, capMs: 60_000, random: () => 0.999 } })
    const first = await gateway.nextLink()
    await first.acceptRegistration()
    const disconnected = nextEvent<DisconnectInfo>(a, 'disconnected')
    a.relink()
    expect(await first.closed).toEqual({ code: 1000, reason: 'relinking' })
    expect(await disconnected).toEqual({ code: 1000, reason: 'relinking', reconnectInMs: 0 })
    const registered = once(a, 'registered')
    const second = await gateway.nextLink()
    await second.acceptRegistration()
    await registered
    expect(gateway.links).toHaveLength(2)
  })

  it('close() ends the link with 1000 and stops reconnecting', async () => {
    const a = startAgent()
    const link = await gateway.nextLink()
    await link.acceptRegistration()
    await a.close()
    expect(await link.closed).toEqual({ code: 1000, reason: 'agent closing' })
    expect(a.state).toBe('stopped')
    expect(gateway.links).toHaveLength(1)
  })

  it('stays stopped when a disconnected listener closes it', async () => {
    fakeTimers()
    const a = startAgent({ backoff: { baseMs: 5, capMs: 5 } })
    a.on('disconnected', () => void a.close())
    const link = await gateway.nextLink()
    await link.acceptRegistration()
    const stopped = nextEvent(a, 'stopped')
    link.ws.close(1011, 'overloaded')
    await stopped
    await vi.advanceTimersByTimeAsync(1000)
    expect(a.state).toBe('stopped')
  })

  it('close() while the gateway is unreachable stops the retry loop', async () => {
    await gateway.close()
    const a = startAgent({ url: 'http://127.0.0.1:9', backoff: { baseMs: 5, capMs: 5 } })
    await once(a, 'disconnected')
    await a.close()
    expect(a.state).toBe('stopped')
    // Absence can only be watched for a while: 20 back-off periods pass with no further attempt.
    let attemptsAfterClose = 0
    a.on('disconnected', () => attemptsAfterClose++)
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(attemptsAfterClose).toBe(0)
  })
})
