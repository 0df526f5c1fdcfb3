import { randomUUID } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import { ErrorCode, type NatsConnection, type Subscription } from 'nats'
import { AppError, type ErrorCode as AppErrorCode } from '../../errors.js'
import { drainNats } from '../../nats/connect-nats.js'
import type { LinkRegistry } from '../link-registry.js'
import type { LinkHint, LiveState } from '../live-state.js'
import type { DeviceAnswer, DeviceBus, DeviceCall } from './device-bus.js'
import { InProcessDeviceBus } from './in-process-device-bus.js'
import { NatsRpc } from './nats-rpc.js'
import { natsSubjects } from './nats-subjects.js'
import { callMessageText, parseCallMessage } from './call-message.js'
import { withTimeout } from '../../lib/time.js'

/** Margin on top of the device time-out so the holder's own 504 usually wins over NATS's. */
const REQUEST_MARGIN_MS = 1000
const CONTROL_TIMEOUT_MS = 2000
const LIVE_TIMEOUT_MS = 1000
/**
 * After NATS comes back, every instance re-subscribes when its own client reconnects, each
 * within about a second (reconnect wait plus jitter) of the server's return. Meanwhile "no
 * responders" may only mean the holder has not re-subscribed yet: it answers 503
 * `service_unavailable` (retry), not 502 `device_unavailable`.
 */
const RESUBSCRIBE_GRACE_MS = 3000
const PASSED_THROUGH: ReadonlySet<string> = new Set<AppErrorCode>(['device_unavailable', 'server_busy', 'device_timeout', 'bad_device_response', 'payload_too_large'])

type RequestMessage = { call: DeviceCall; timeout_ms: number }
type RequestReply = { answer: DeviceAnswer } | { error: string; message: string }
type ControlMessage = { kind: 'takeover'; instance: string; generation: number } | { kind: 'disconnect'; code: number; reason: string }
type LiveReply = { live: Record<string, LiveState> }
/** Asked on an instance's live subject: how many of its links are alive (of ids starting with `prefix`). */
type LiveQuestion = { count: true; prefix?: string }
type CountReply = { alive: number }

/**
 * Several instances: the instance holding a device's link subscribes to the device's request
 * subject; any instance forwards with request-reply. "No responders" means linked nowhere.
 * Live state is asked of the holding instance, named by the registry's `link_instance` hint.
 */
export class NatsDeviceBus implements DeviceBus {
  readonly sharedWithOtherInstances = true
  private readonly local: InProcessDeviceBus
  private takeoverHandler: (deviceId: string, generation: number) => void = () => undefined
  private readonly rpc: NatsRpc
  private readonly held = new Map<string, Subscription>()
  private turnFlush: Promise<void> | undefined

  constructor(
    private readonly nc: NatsConnection,
    private readonly registry: LinkRegistry,
    aliveMs: number,
    private readonly log: FastifyBaseLogger,
    readonly instanceId: string = randomUUID(),
  ) {
    this.local = new InProcessDeviceBus(registry, aliveMs, this.instanceId)
    this.rpc = new NatsRpc(nc)
    this.rpc.serve(natsSubjects.live(this.instanceId), async (msg) => this.answerLive(msg), this.onError)
  }

  async request(deviceId: string, call: DeviceCall, timeoutMs: number): Promise<DeviceAnswer> {
    if (this.registry.get(deviceId)) return this.local.request(deviceId, call, timeoutMs)
    let reply: RequestReply | null
    try {
      reply = (await this.rpc.requestText(natsSubjects.call(deviceId), callMessageText(call, timeoutMs), timeoutMs + REQUEST_MARGIN_MS)) as RequestReply | null
      // The holder predates the call subject (a rolling upgrade): it answers null. Ask it the old way.
      if (reply === null) {
        const message: RequestMessage = { call, timeout_ms: timeoutMs }
        reply = (await this.rpc.request(natsSubjects.request(deviceId), message, timeoutMs + REQUEST_MARGIN_MS)) as RequestReply | null
      }
    } catch (err) {
      throw this.busError(deviceId, err, timeoutMs)
    }
    if (typeof reply !== 'object' || reply === null) throw new AppError('device_unavailable', `Device ${deviceId} unreachable over the bus: the holding instance answered ${JSON.stringify(reply)}`)
    if ('answer' in reply) return reply.answer
    const code = PASSED_THROUGH.has(reply.error) ? (reply.error as AppErrorCode) : 'device_unavailable'
    throw new AppError(code, reply.message)
  }

  async live(devices: readonly LinkHint[]): Promise<Map<string, LiveState>> {
    const result = this.local.localLive(devices.map((d) => d.device_id))
    const byInstance = new Map<string, string[]>()
    for (const { device_id, link_instance } of devices) {
      if (result.has(device_id) || !link_instance || link_instance === this.instanceId) continue
      byInstance.set(link_instance, [...(byInstance.get(link_instance) ?? []), device_id])
    }
    await Promise.all(
      [...byInstance].map(async ([instance, ids]) => {
        try {
          const reply = (await this.rpc.request(natsSubjects.live(instance), { ids }, LIVE_TIMEOUT_MS)) as LiveReply
          for (const [id, state] of Object.entries(reply.live)) result.set(id, state)
        } catch {
          // The instance is gone (or unreachable): its devices count as not linked.
        }
      }),
    )
    return result
  }

  async aliveCount(prefix: string | undefined, holders: readonly string[]): Promise<number> {
    const counts = await Promise.all(
      holders
        .filter((instance) => instance !== this.instanceId)
        .map(async (instance) => {
          try {
            const reply = (await this.rpc.request(natsSubjects.live(instance), { count: true, prefix } satisfies LiveQuestion, LIVE_TIMEOUT_MS)) as Partial<CountReply>
            return typeof reply.alive === 'number' ? reply.alive : 0
          } catch {
            return 0 // gone or unreachable: its devices count as not linked, as in live()
          }
        }),
    )
    return counts.reduce((a, b) => a + b, await this.local.aliveCount(prefix))
  }

  /**
   * Subscribes to the device's subjects (so later announcements reach us), then publishes the
   * claim and waits until the server has it: every instance subscribed by then receives it.
   */
  async claim(deviceId: string, generation: number): Promise<void> {
    // Nobody would hear the announcement now: refuse at once rather than after the time-out.
    if (!this.connected) throw new Error('NATS is unreachable: the claim cannot be announced')
    if (!this.held.has(deviceId)) {
      const call = natsSubjects.call(deviceId)
      const request = natsSubjects.request(deviceId)
      const control = natsSubjects.control(deviceId)
      // One subscription for all three subjects. A released subscription drains (below): a call
      // reaching it meanwhile is answered "not linked here", never forwarded, should a newer link
      // of the device hold it here again.
      const sub: Subscription = this.rpc.serveText(
        natsSubjects.device(deviceId),
        async (text, subject) => {
          if (subject === control) return this.answerControl(deviceId, JSON.parse(text) as ControlMessage)
          if (subject !== call && subject !== request) return undefined
          if (this.held.get(deviceId) !== sub) return notLinkedHere(deviceId)
          return subject === call ? this.answerCall(deviceId, text) : this.answerRequest(deviceId, JSON.parse(text) as RequestMessage)
        },
        this.onError,
      )
      this.held.set(deviceId, sub)
    }
    this.rpc.publish(natsSubjects.control(deviceId), { kind: 'takeover', instance: this.instanceId, generation } satisfies ControlMessage)
    await withTimeout(this.flushAfterTurn(), CONTROL_TIMEOUT_MS, 'NATS did not confirm the claim in time')
  }

  /**
   * One round trip to the server for everything published in this turn of the event loop: the
   * ping leaves after all of it, so its answer confirms each (a batch of claims then costs one
   * ping, not one per device).
   */
  private flushAfterTurn(): Promise<void> {
    this.turnFlush ??= new Promise<void>((resolve, reject) =>
      setImmediate(() => {
        this.turnFlush = undefined
        this.nc.flush().then(resolve, reject)
      }),
    )
    return this.turnFlush
  }

  /** Whether the NATS server can be reached right now (`/readyz`). */
  get connected(): boolean {
    return this.rpc.connection.connected
  }

  onTakeover(handler: (deviceId: string, generation: number) => void): void {
    this.takeoverHandler = handler
  }

  /**
   * Drains the device's subscriptions rather than dropping them: a request the server routed here
   * before it processed the unsubscription still reaches the handler and is answered (502 at
   * once) instead of being dropped by the client and left to time out on the calling instance
   * (a 504 after the device time-out, seen for machines moving in a rolling restart).
   */
  async release(deviceId: string): Promise<void> {
    const sub = this.held.get(deviceId)
    if (!sub) return
    this.held.delete(deviceId)
    if (this.nc.isClosed()) return
    await withTimeout(sub.drain(), CONTROL_TIMEOUT_MS, 'NATS did not confirm the release in time')
  }

  async disconnect(deviceId: string, code: number, reason: string): Promise<void> {
    if (this.registry.get(deviceId)) return this.local.disconnect(deviceId, code, reason)
    try {
      await this.rpc.request(natsSubjects.control(deviceId), { kind: 'disconnect', code, reason } satisfies ControlMessage, CONTROL_TIMEOUT_MS)
    } catch (err) {
      if (codeOf(err) !== ErrorCode.NoResponders) throw this.busError(deviceId, err, CONTROL_TIMEOUT_MS)
    }
  }

  /** The connection's drain ends every subscription: what reached them is still answered. */
  async close(): Promise<void> {
    this.held.clear()
    this.rpc.close()
    await drainNats(this.nc)
  }

  private answerCall(deviceId: string, text: string): Promise<RequestReply> {
    const message = parseCallMessage(text)
    if (!message) return Promise.resolve({ error: 'device_unavailable', message: `Malformed call for device ${deviceId} from another instance` })
    return this.replyOf(deviceId, () => this.local.requestFields(deviceId, message.fields, message.timeoutMs))
  }

  private answerRequest(deviceId: string, msg: RequestMessage): Promise<RequestReply> {
    return this.replyOf(deviceId, () => this.local.request(deviceId, msg.call, msg.timeout_ms))
  }

  private async replyOf(deviceId: string, ask: () => Promise<DeviceAnswer>): Promise<RequestReply> {
    try {
      return { answer: await ask() }
    } catch (err) {
      if (err instanceof AppError) return { error: String(err.code), message: err.message }
      return { error: 'device_unavailable', message: `Device ${deviceId} is not connected` }
    }
  }

  private async answerControl(deviceId: string, msg: ControlMessage): Promise<{ ok: true }> {
    if (msg.kind === 'takeover') {
      if (typeof msg.generation === 'number') this.takeoverHandler(deviceId, msg.generation)
    } else {
      this.registry.get(deviceId)?.close(msg.code, msg.reason)
    }
    return { ok: true }
  }

  private async answerLive(msg: unknown): Promise<LiveReply | CountReply> {
    const question = msg as Partial<LiveQuestion>
    if (question.count === true) return { alive: await this.local.aliveCount(typeof question.prefix === 'string' ? question.prefix : undefined) }
    const ids = (msg as { ids?: unknown }).ids
    const live = this.local.localLive(Array.isArray(ids) ? ids.filter((id): id is string => typeof id === 'string') : [])
    return { live: Object.fromEntries(live) }
  }

  private readonly onError = (err: unknown) => this.log.error({ err }, 'NATS device bus error')

  private busError(deviceId: string, err: unknown, timeoutMs: number): AppError {
    const code = codeOf(err)
    if (code === ErrorCode.Disconnect || code === ErrorCode.ConnectionClosed || (code === ErrorCode.NoResponders && this.rpc.connection.reconnectedWithin(RESUBSCRIBE_GRACE_MS))) {
      const error = new AppError('service_unavailable', `Device ${deviceId} is not linked to this instance, and the other instances cannot be reached over NATS right now; retry shortly`)
      error.cause = err
      return error
    }
    return busError(deviceId, err, timeoutMs)
  }
}

const notLinkedHere = (deviceId: string): RequestReply => ({ error: 'device_unavailable', message: `Device ${deviceId} is not connected` })

const codeOf = (err: unknown) => (err as { code?: unknown } | null)?.code

function busError(deviceId: string, err: unknown, timeoutMs: number): AppError {
  switch (codeOf(err)) {
    case ErrorCode.NoResponders:
      return new AppError('device_unavailable', `Device ${deviceId} is not connected`)
    case ErrorCode.Timeout:
      return new AppError('device_timeout', `Device ${deviceId} did not answer within ${timeoutMs} ms`)
    case ErrorCode.MaxPayloadExceeded:
      return new AppError('payload_too_large', 'Request too large for the inter-instance bus')
    default:
      return new AppError('device_unavailable', `Device ${deviceId} unreachable over the bus: ${(err as Error)?.message ?? err}`)
  }
}
