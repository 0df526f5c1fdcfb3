import type { Socket } from 'node:net'
import { Registry } from 'prom-client'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import type { DeviceCall } from '../../src/link/bus/device-bus.js'
import { DeviceLink } from '../../src/link/device-link.js'
import { createLinkMetrics } from '../../src/link/link-metrics.js'
import type { LinkObserver } from '../../src/link/link-observer.js'
import { LinkSession, type LinkSessionHost, type Registration } from '../../src/link/link-session.js'
import { CLOSE_CODES, type RegisterFrame } from '@fleetgate/device-agent/protocol'
import { DEVICE_KEY, RawDevice } from '../gateway/helpers/raw-device.js'
import { streamOversizeFrame } from './helpers/oversize-frame.js'
import { roundTrip } from './helpers/round-trip.js'
import { startSocketServer, type SocketServer } from './helpers/socket-server.js'

const KiB = 1024
const metrics = createLinkMetrics(new Registry(), { linked: () => 0, inFlight: () => 0 })

interface PendingRegistration {
  socket: WebSocket
  wire: Socket
  frame: RegisterFrame
  decide(registration: Registration | undefined): void
}

/** The link server's side of a session, recording what the session asks of it; the test decides each registration. */
class RecordingHost implements LinkSessionHost {
  readonly pending: PendingRegistration[] = []
  /** Frame types dispatched to registered links, in order. */
  readonly dispatched: string[] = []
  readonly marked: DeviceLink[] = []
  readonly unlinked: DeviceLink[] = []
  readonly writer = { mark: (link: DeviceLink) => void this.marked.push(link) }
  readonly events: LinkObserver = {
    registered: () => undefined,
    closed: () => undefined,
    frame: (_link, type) => void this.dispatched.push(type),
  }

  constructor(readonly registerTimeoutMs: number) {}

  register(socket: WebSocket, wire: Socket, frame: RegisterFrame): Promise<Registration | undefined> {
    return new Promise((decide) => this.pending.push({ socket, wire, frame, decide }))
  }

  stoppedAwaiting(): void {}

  socketClosed(): void {}

  unlink(link: DeviceLink): void {
    this.unlinked.push(link)
  }
}

const CALL: DeviceCall = { method: 'GET', path: '/x', query: {}, body: null, user: { id: 'root', username: 'root', role: 'admin' } }

const registerFrame = { type: 'register', device_id: 'pnp-session', key: DEVICE_KEY, hostname: 'h', version: '1' }

const linkOf = ({ socket, wire, frame }: PendingRegistration) =>
  new DeviceLink({ linkId: 'link-1', deviceId: frame.device_id, hostname: frame.hostname, ip: '127.0.0.1', version: frame.version }, 1, socket, metrics, wire)

/** A socket server whose every socket becomes a session; each test gets a fresh host. */
function sessionServer(registerTimeoutMs: number) {
  const state = { host: new RecordingHost(registerTimeoutMs), sessions: [] as LinkSession[], wires: [] as Socket[], server: undefined as SocketServer | undefined }
  beforeAll(async () => {
    state.server = await startSocketServer((socket, wire) => {
      state.wires.push(wire)
      state.sessions.push(new LinkSession(socket, wire, state.host))
    })
  })
  beforeEach(() => {
    state.host = new RecordingHost(registerTimeoutMs)
    state.sessions = []
    state.wires = []
  })
  afterAll(() => state.server?.close())
  return state
}

describe('a device-link session', () => {
  const s = sessionServer(10_000)

  /** Opens a device, sends a register frame and resolves once the session asked for its registration. */
  async function registering(): Promise<{ device: RawDevice; registration: PendingRegistration; session: LinkSession }> {
    const device = await RawDevice.open(s.server!.url)
    device.send(registerFrame)
    await expect.poll(() => s.host.pending.length).toBe(1)
    return { device, registration: s.host.pending[0]!, session: s.sessions[0]! }
  }

  it('holds frames sent while registering and handles them in their order once registered', async () => {
    const { device, registration, session } = await registering()
    device.heartbeat({ n: 1 })
    device.respond('no-such-request', 200, null)
    device.heartbeat({ n: 2 })
    // The socket stops reading once a frame waits for the registration.
    await expect.poll(() => registration.wire.isPaused()).toBe(true)
    expect(session.state).toBe('registering')
    expect(s.host.dispatched).toEqual([])

    const link = linkOf(registration)
    registration.decide({ ok: true, link })
    await expect.poll(() => s.host.dispatched).toEqual(['heartbeat', 'response', 'heartbeat'])
    expect(session.state).toBe('registered')
    expect(link.lastStatus).toEqual({ n: 2 })
    expect(link.messagesReceived).toBe(3)
    expect(s.host.marked).toEqual([link, link])
    await device.close()
    await expect.poll(() => s.host.unlinked).toEqual([link])
  })

  it('closes with 4400 once registered when a second register frame came while registering', async () => {
    const { device, registration, session } = await registering()
    device.send(registerFrame)
    await expect.poll(() => registration.wire.isPaused()).toBe(true)
    const link = linkOf(registration)
    registration.decide({ ok: true, link })
    expect(await device.closed).toEqual({ code: 4400, reason: 'already registered' })
    expect(session.state).toBe('closed')
    expect(s.host.dispatched).toEqual([])
    await expect.poll(() => s.host.unlinked).toEqual([link])
  })

  it('closes with 1009 on a frame over 64 KiB while registering, and unlinks the link its registration then returns', async () => {
    const { device, registration, session } = await registering()
    device.heartbeat({ pad: 'x'.repeat(65 * KiB) })
    expect((await device.closed).code).toBe(1009)
    await expect.poll(() => session.state).toBe('closed')
    expect(s.host.unlinked).toEqual([])

    const link = linkOf(registration)
    registration.decide({ ok: true, link })
    await expect.poll(() => s.host.unlinked).toEqual([link])
    expect(session.state).toBe('closed')
    expect(s.host.dispatched).toEqual([])
  })

  it('closes a refused registration with the refusal, never handling the frames that waited for it', async () => {
    const { device, registration, session } = await registering()
    device.heartbeat({ waiting: true })
    await expect.poll(() => registration.wire.isPaused()).toBe(true)
    expect(device.socket.readyState).toBe(WebSocket.OPEN)

    registration.decide({ ok: false, refusal: { code: CLOSE_CODES.unauthorized, reason: 'wrong key for this device id' } })
    expect(await device.closed).toEqual({ code: 4401, reason: 'wrong key for this device id' })
    expect(session.state).toBe('closed')
    expect(s.host.dispatched).toEqual([])
    expect(s.host.unlinked).toEqual([])
  })

  it('refuses a frame over 64 KiB before registration as its bytes arrive, long before ws would have buffered it', async () => {
    const outcome = await streamOversizeFrame(s.server!.url, 16 * 1024 * KiB)
    // The limit, a read of the socket past it, and the upgrade request: far below the 16 MiB announced.
    expect(s.wires[0]!.bytesRead).toBeLessThan(192 * KiB)
    expect(outcome.payloadWritten).toBeLessThan(1024 * KiB)
    expect(outcome.closeCode).toBe(1009)
    expect(outcome.cutOff).toBe(true)
    await expect.poll(() => s.sessions[0]!.state).toBe('closed')
  })

  it('refuses a frame over 64 KiB streamed while registering, before it is complete, and unlinks the link its registration returns', async () => {
    const outcome = await streamOversizeFrame(s.server!.url, 16 * 1024 * KiB, { before: [JSON.stringify(registerFrame)] })
    expect(s.wires[0]!.bytesRead).toBeLessThan(192 * KiB)
    expect(outcome.closeCode).toBe(1009)
    expect(s.host.pending).toHaveLength(1)
    await expect.poll(() => s.sessions[0]!.state).toBe('closed')
    const registration = s.host.pending[0]!
    const link = linkOf(registration)
    registration.decide({ ok: true, link })
    await expect.poll(() => s.host.unlinked).toEqual([link])
  })

  it('lets a legal client through: a 64 KiB register frame with a 60 KiB frame right behind it', async () => {
    const device = await RawDevice.open(s.server!.url)
    const frame = JSON.stringify({ ...registerFrame, pad: '' })
    device.send(frame.replace('"pad":""', `"pad":"${'x'.repeat(64 * KiB - frame.length)}"`))
    device.heartbeat({ pad: 'y'.repeat(60 * KiB) })
    await expect.poll(() => s.host.pending.length).toBe(1)
    const registration = s.host.pending[0]!
    await expect.poll(() => registration.wire.isPaused()).toBe(true)
    expect(s.sessions[0]!.state).toBe('registering')
    const listeners = registration.wire.listenerCount('data')
    registration.decide({ ok: true, link: linkOf(registration) })
    await expect.poll(() => s.host.dispatched).toEqual(['heartbeat'])
    // The byte count is gone once registered: ws is the socket's only reader again.
    expect(registration.wire.listenerCount('data')).toBe(listeners - 1)
    await device.close()
  })

  it('closes a registered link with 4400 on a binary frame', async () => {
    const { device, registration, session } = await registering()
    registration.decide({ ok: true, link: linkOf(registration) })
    await expect.poll(() => session.state).toBe('registered')
    device.socket.send(Buffer.from(JSON.stringify({ type: 'heartbeat', status: {} })), { binary: true })
    expect((await device.closed).code).toBe(4400)
    expect(s.host.dispatched).toEqual([])
  })

  it('is closed from the moment its link is closed (a takeover), before the socket is: later frames are ignored', async () => {
    const { device, registration, session } = await registering()
    const link = linkOf(registration)
    registration.decide({ ok: true, link })
    await expect.poll(() => session.state).toBe('registered')
    // As a takeover does: the link ends first, its socket is closed right after.
    link.markClosed()
    expect(session.state).toBe('closed')
    device.heartbeat({ late: true })
    // The pong comes back after the heartbeat was read: it reached the session, which dropped it.
    expect(await roundTrip(device)).toBe('pong')
    expect(s.host.dispatched).toEqual([])
    expect(link.lastStatus).toEqual({})
    await expect(link.request(CALL, 1000)).rejects.toMatchObject({ code: 'device_unavailable' })
    await device.close()
    await expect.poll(() => s.host.unlinked).toEqual([link])
    // The server's bookkeeping for the end runs once, whoever asks first (socket close or takeover).
    expect(link.markUnlinked()).toBe(true)
    expect(link.markUnlinked()).toBe(false)
    expect(link.state).toBe('unlinked')
  })

  it('closes a registered socket through its link: the link is closed at once, its pending requests fail with 502', async () => {
    const { device, registration, session } = await registering()
    const link = linkOf(registration)
    registration.decide({ ok: true, link })
    await expect.poll(() => session.state).toBe('registered')
    const pending = link.request(CALL, 10_000)
    session.close(CLOSE_CODES.bad_frame, 'test')
    expect(link.state).toBe('closed')
    await expect(pending).rejects.toMatchObject({ code: 'device_unavailable' })
    expect((await device.closed).code).toBe(CLOSE_CODES.bad_frame)
  })
})

describe('a device-link session with a short register time limit', () => {
  const s = sessionServer(200)

  it('stops the register timer once the register frame arrived, however long registration takes', async () => {
    const slow = await RawDevice.open(s.server!.url)
    slow.send(registerFrame)
    await expect.poll(() => s.host.pending.length).toBe(1)
    const silent = await RawDevice.open(s.server!.url)
    expect(await silent.closed).toEqual({ code: 4408, reason: 'no register frame within the time limit' })

    // The slow device's timer was due first: a 4408 sent to it would arrive before this pong.
    expect(await roundTrip(slow)).toBe('pong')
    const registration = s.host.pending[0]!
    registration.decide({ ok: true, link: linkOf(registration) })
    await expect.poll(() => s.sessions[0]!.state).toBe('registered')
    await slow.close()
  })
})
