import { EventEmitter } from 'node:events'
import { afterEach, beforeEach, describe, expect, it, vi, type Mock } from 'vitest'
import WebSocket from 'ws'
import { AGENT_LINK_TRANSITIONS, AgentLinkSession, type AgentLinkHost } from '../src/agent-link-session.js'
import { ok, RouteTable } from '../src/route-table.js'
import { TaskQueue } from '../src/task-queue.js'

type Frame = Record<string, unknown> & { type: string }
type Reported = 'registered' | 'stable' | 'ready' | 'request' | 'firmwareOffer' | 'productionAck' | 'closed' | 'log'
type WatchedHost = Omit<AgentLinkHost, Reported> & { [K in Reported]: Mock<AgentLinkHost[K]> }

/** The agent's side of a socket, driven by the test: what `ws` would emit, and what was sent. */
class FakeSocket extends EventEmitter {
  readyState: number = WebSocket.CONNECTING
  readonly sent: Frame[] = []
  closeRequest: { code: number; reason: string } | undefined
  terminated = false

  send(text: string, done: (err?: Error) => void): void {
    this.sent.push(JSON.parse(text) as Frame)
    done()
  }
  close(code: number, reason: string): void {
    this.closeRequest = { code, reason }
    this.readyState = WebSocket.CLOSING
  }
  terminate(): void {
    this.terminated = true
    this.readyState = WebSocket.CLOSING
  }
  open(): void {
    this.readyState = WebSocket.OPEN
    this.emit('open')
  }
  receive(frame: unknown): void {
    this.emit('message', Buffer.from(JSON.stringify(frame)), false)
  }
  closed(code: number, reason = ''): void {
    this.readyState = WebSocket.CLOSED
    this.emit('close', code, Buffer.from(reason))
  }
  sentOf(type: string): Frame[] {
    return this.sent.filter((frame) => frame.type === type)
  }
}

const REGISTERED = { type: 'registered', device_id: 'pnp-01', server_time: 1 }
const request = (id: string) => ({ type: 'request', id, method: 'GET', path: '/work', query: {}, body: null, user: { id: 'u', username: 'u', role: 'admin' } })

describe('AgentLinkSession', () => {
  let socket: FakeSocket
  let handled: string[]
  let releaseHandlers: () => void
  let host: WatchedHost

  const startSession = () => new AgentLinkSession(socket as unknown as WebSocket, host)
  const registeredSession = async () => {
    const session = startSession()
    socket.open()
    socket.receive(REGISTERED)
    await vi.advanceTimersByTimeAsync(0)
    return session
  }

  beforeEach(() => {
    vi.useFakeTimers()
    socket = new FakeSocket()
    handled = []
    const handlersGate = new Promise<void>((resolve) => (releaseHandlers = resolve))
    host = {
      registerFrame: { type: 'register', device_id: 'pnp-01', key: 'device-secret-0123456789', hostname: 'pnp-01', version: '1' },
      registerTimeoutMs: 1000,
      heartbeatMs: 100,
      stableLinkMs: 500,
      routes: new RouteTable().get('/work', async ({ user }) => {
        handled.push(user.id)
        await handlersGate
        return ok({})
      }),
      requests: new TaskQueue(1),
      heartbeatStatus: async () => ({ state: 'idle' }),
      log: vi.fn<AgentLinkHost['log']>(),
      registered: vi.fn<AgentLinkHost['registered']>(),
      stable: vi.fn<AgentLinkHost['stable']>(),
      ready: vi.fn<AgentLinkHost['ready']>(),
      request: vi.fn<AgentLinkHost['request']>(),
      firmwareOffer: vi.fn<AgentLinkHost['firmwareOffer']>(),
      productionAck: vi.fn<AgentLinkHost['productionAck']>(),
      closed: vi.fn<AgentLinkHost['closed']>(),
    }
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it('has this state table: connecting → registering → registered, any live state → closed, nothing out of closed', () => {
    expect(AGENT_LINK_TRANSITIONS).toEqual({
      connecting: ['registering', 'closed'],
      registering: ['registered', 'closed'],
      registered: ['closed'],
      closed: [],
    })
  })

  it('sends the register frame on open and, without registered in time, closes and terminates the socket', async () => {
    const session = startSession()
    expect(session.state).toBe('connecting')
    socket.open()
    expect(session.state).toBe('registering')
    expect(socket.sent).toEqual([host.registerFrame])
    await vi.advanceTimersByTimeAsync(999)
    expect(session.state).toBe('registering')
    await vi.advanceTimersByTimeAsync(1)
    expect(session.state).toBe('closed')
    expect(socket.terminated).toBe(true)
    socket.closed(1006)
    expect(host.closed).toHaveBeenCalledExactlyOnceWith(session, 1006, '')
  })

  it('once registered heartbeats at once and every heartbeatMs, reports ready once, and calls the link stable after stableLinkMs', async () => {
    const session = await registeredSession()
    expect(session.state).toBe('registered')
    expect(host.registered).toHaveBeenCalledExactlyOnceWith(REGISTERED)
    expect(socket.sentOf('heartbeat')).toEqual([{ type: 'heartbeat', status: { state: 'idle' } }])
    expect(host.ready).toHaveBeenCalledOnce()
    await vi.advanceTimersByTimeAsync(200)
    expect(socket.sentOf('heartbeat')).toHaveLength(3)
    expect(host.ready).toHaveBeenCalledOnce()
    expect(host.stable).not.toHaveBeenCalled()
    await vi.advanceTimersByTimeAsync(300)
    expect(host.stable).toHaveBeenCalledOnce()
  })

  it('refuses the moves its table does not allow: registered before open, a second registered', async () => {
    const session = startSession()
    socket.receive(REGISTERED)
    expect(session.state).toBe('connecting')
    socket.open()
    socket.receive(REGISTERED)
    socket.receive(REGISTERED)
    expect(session.state).toBe('registered')
    expect(host.registered).toHaveBeenCalledOnce()
    expect(host.log).toHaveBeenCalledWith('warn', 'ignored an unexpected registered frame')
  })

  it('does not move out of closed: a session closed while connecting neither registers nor times out', async () => {
    const session = startSession()
    void session.close(1000, 'relinking')
    socket.open()
    socket.receive(REGISTERED)
    await vi.advanceTimersByTimeAsync(10_000)
    expect(session.state).toBe('closed')
    expect(socket.sent).toEqual([])
    expect(host.registered).not.toHaveBeenCalled()
    expect(host.log).not.toHaveBeenCalledWith('warn', expect.stringContaining('no registered frame'))
  })

  it('takes no request or offer before registration', () => {
    startSession()
    socket.open()
    socket.receive(request('r1'))
    socket.receive({ type: 'firmware-offer', rollout_id: 'ro-1', release_id: 'rel-1', image_version: 1, display_version: '1', size: 1, sha256: 'a'.repeat(64), crc32: '00000000', url: '/x' })
    expect(host.request).not.toHaveBeenCalled()
    expect(host.firmwareOffer).not.toHaveBeenCalled()
  })

  it('ignores every frame after close, silently, and does not serve the requests it had queued', async () => {
    const session = await registeredSession()
    socket.receive(request('r1'))
    socket.receive(request('r2')) // waits: one handler at a time
    expect(handled).toEqual(['u'])
    void session.close(1000, 'relinking')
    expect(socket.closeRequest).toEqual({ code: 1000, reason: 'relinking' })
    host.log.mockClear()
    socket.receive(request('r3'))
    socket.receive(REGISTERED)
    expect(host.log).not.toHaveBeenCalled() // silently: nothing of the closed link is news
    releaseHandlers()
    await vi.advanceTimersByTimeAsync(0)
    expect(host.request).toHaveBeenCalledTimes(2)
    expect(handled).toEqual(['u'])
    expect(socket.sentOf('response')).toEqual([])
  })

  it('clears its timers when closed: no heartbeat, stable call or register time-out afterwards', async () => {
    const session = await registeredSession()
    expect(vi.getTimerCount()).toBe(2)
    const closed = session.close(1000, 'agent closing')
    expect(session.state).toBe('closed')
    expect(vi.getTimerCount()).toBe(1) // the closing handshake's own limit
    socket.closed(1000, 'agent closing')
    await closed
    expect(vi.getTimerCount()).toBe(0)
    await vi.advanceTimersByTimeAsync(10_000)
    expect(socket.sentOf('heartbeat')).toHaveLength(1)
    expect(host.stable).not.toHaveBeenCalled()
    expect(host.closed).toHaveBeenCalledExactlyOnceWith(session, 1000, 'agent closing')
  })

  it('terminates a socket that does not finish closing within 2 s', async () => {
    const session = await registeredSession()
    void session.close(1000, 'agent closing')
    await vi.advanceTimersByTimeAsync(1999)
    expect(socket.terminated).toBe(false)
    await vi.advanceTimersByTimeAsync(1)
    expect(socket.terminated).toBe(true)
  })

  it('on a close by the gateway stops its timers and reports the code once', async () => {
    const session = await registeredSession()
    socket.closed(4409, 'replaced')
    expect(session.state).toBe('closed')
    expect(vi.getTimerCount()).toBe(0)
    expect(host.closed).toHaveBeenCalledExactlyOnceWith(session, 4409, 'replaced')
  })

  it('sends a firmware status only once registered with its first heartbeat out, and not after close', async () => {
    const status = { type: 'firmware-status', rollout_id: 'ro-1', release_id: 'rel-1', state: 'installed' } as const
    const session = startSession()
    socket.open()
    expect(session.sendIfReady(status)).toBe(false)
    socket.receive(REGISTERED)
    await vi.advanceTimersByTimeAsync(0)
    expect(session.sendIfReady(status)).toBe(true)
    void session.close(1000, 'relinking')
    socket.readyState = WebSocket.OPEN // whatever the socket says, a closed session sends nothing
    expect(session.sendIfReady(status)).toBe(false)
    expect(socket.sentOf('firmware-status')).toHaveLength(1)
  })

  it('hands production-ack frames to the host once registered, and sends production frames only when ready', async () => {
    const session = startSession()
    socket.open()
    const frame = JSON.stringify({ type: 'production', events: [{ id: 'e1', ts: 1, kind: 'placements', placed: 1, missed: 0 }] })
    expect(session.sendTextIfReady(frame)).toBe(false)
    socket.receive({ type: 'production-ack', ids: ['e0'], rejected: [] })
    expect(host.productionAck).not.toHaveBeenCalled()
    socket.receive(REGISTERED)
    await vi.advanceTimersByTimeAsync(0)
    expect(session.sendTextIfReady(frame)).toBe(true)
    socket.receive({ type: 'production-ack', ids: ['e1'], rejected: [{ id: 'e2', error: 'unknown kind' }] })
    expect(host.productionAck).toHaveBeenCalledWith({ type: 'production-ack', ids: ['e1'], rejected: [{ id: 'e2', error: 'unknown kind' }] })
    expect(socket.sentOf('production')).toHaveLength(1)
  })
})
