import { createHmac, createSecretKey, randomBytes, type KeyObject } from 'node:crypto'
import { headers as natsHeaders, type Msg, type MsgHdrs, type NatsConnection, type PublishOptions, type Subscription, type SubscriptionOptions } from 'nats'
import { Counter, type Registry } from 'prom-client'
import { sameDigest } from '../auth/secrets.js'
import { ReplayGuard } from './replay-guard.js'

/** Milliseconds since the epoch at which the message was signed. */
export const TIMESTAMP_HEADER = 'fg-ts'
/** `<sender>.<n>`: the signing connection's random id and its message number (base 36), unique per message. */
export const MESSAGE_ID_HEADER = 'fg-id'
/** HMAC-SHA256 (base64url) with the cluster key over the time-stamp, message id, subject, reply subject and payload. */
export const SIGNATURE_HEADER = 'fg-sig'
/** A message signed further from now than this (either way) is refused: a replay, or a clock far off. */
export const SIGNATURE_WINDOW_MS = 30_000
/** CLUSTER_KEY's shortest length, in bytes. */
export const CLUSTER_KEY_MIN_BYTES = 32

export type RejectionReason = 'unsigned' | 'bad_signature' | 'stale' | 'replayed'

const REJECTED_NAME = 'fleetgate_bus_rejected_messages_total'

/** The app's counter of refused bus messages (one per registry, shared by every connection of the app). */
export function busRejectedCounter(registry?: Registry): Counter<'reason'> {
  const existing = registry?.getSingleMetric(REJECTED_NAME)
  if (existing) return existing as Counter<'reason'>
  return new Counter({
    name: REJECTED_NAME,
    help: 'Messages from NATS ignored for want of a valid cluster-key signature (reason: unsigned, bad_signature, stale time-stamp, replayed copy)',
    labelNames: ['reason'],
    registers: registry ? [registry] : [],
  })
}

const encoder = new TextEncoder()

/**
 * Signs and checks inter-instance messages with the cluster key (contract §17): an HMAC-SHA256
 * over the time-stamp, the message id, the subject, the reply subject (empty when none) and the
 * payload. The message id (`<sender>.<n>`: this signer's random id, a number it increments for
 * every message) lets each subscription refuse a copy replayed within the time window
 * (`ReplayGuard`).
 */
export class BusSigner {
  /** A KeyObject: each HMAC then skips copying the key (about 15% of a small message's signature). */
  private readonly key: KeyObject
  /** This signer's id in message ids: 8 random bytes, so two instances (or restarts) never share one. */
  private readonly senderId = randomBytes(8).toString('base64url')
  private sent = 0

  constructor(
    key: string | Buffer,
    readonly rejected: Counter<'reason'> = busRejectedCounter(),
    private readonly now: () => number = Date.now,
  ) {
    const bytes = Buffer.isBuffer(key) ? key : Buffer.from(key, 'utf8')
    if (bytes.length < CLUSTER_KEY_MIN_BYTES) throw new Error(`the cluster key must be at least ${CLUSTER_KEY_MIN_BYTES} bytes`)
    this.key = createSecretKey(bytes)
  }

  /** The headers that sign `data` published on `subject` (with `reply`), added to `into` when given. */
  sign(subject: string, reply: string | undefined, data: Uint8Array, into: MsgHdrs = natsHeaders()): MsgHdrs {
    const ts = String(this.now())
    const id = `${this.senderId}.${(++this.sent).toString(36)}`
    into.set(TIMESTAMP_HEADER, ts)
    into.set(MESSAGE_ID_HEADER, id)
    into.set(SIGNATURE_HEADER, this.mac(ts, id, subject, reply, data).toString('base64url'))
    return into
  }

  /**
   * Why a received message is refused, or undefined when its signature is valid and fresh (and,
   * with the subscription's `replays` guard, it is not a copy of a message already accepted there).
   */
  check(msg: Pick<Msg, 'subject' | 'reply' | 'headers' | 'data'>, replays?: ReplayGuard): RejectionReason | undefined {
    const ts = msg.headers?.get(TIMESTAMP_HEADER)
    const id = msg.headers?.get(MESSAGE_ID_HEADER)
    const sig = msg.headers?.get(SIGNATURE_HEADER)
    if (!ts || !id || !sig) return 'unsigned'
    const given = Buffer.from(sig, 'base64url')
    const expected = this.mac(ts, id, msg.subject, msg.reply, msg.data)
    if (!sameDigest(given, expected)) return 'bad_signature'
    const at = Number(ts)
    if (!Number.isFinite(at) || Math.abs(this.now() - at) > SIGNATURE_WINDOW_MS) return 'stale'
    // Last: only a message with a valid signature takes a place in the guard.
    if (replays && !replays.fresh(id)) return 'replayed'
    return undefined
  }

  /** True when the message may be handled; otherwise it is counted. */
  accept(msg: Msg, replays?: ReplayGuard): boolean {
    const reason = this.check(msg, replays)
    if (reason === undefined) return true
    this.rejected.inc({ reason })
    return false
  }

  /** A guard for one subscription: remembers its senders' messages as long as one of them could still be fresh. */
  replayGuard(): ReplayGuard {
    return new ReplayGuard(2 * SIGNATURE_WINDOW_MS, this.now)
  }

  private mac(ts: string, id: string, subject: string, reply: string | undefined, data: Uint8Array): Buffer {
    return createHmac('sha256', this.key).update(`${ts}\n${id}\n${subject}\n${reply ?? ''}\n`).update(data).digest()
  }
}

/**
 * The server's own "no responders" answer (status 503, no payload) cannot be signed: it is let
 * through. A forger can send one too, which fails a request at once as "not linked" — a denial
 * the forger could cause anyway by flooding — but can never stand for an answer. Only on reply
 * inboxes: anywhere else it would be a request or an event, and is refused like any unsigned one.
 */
const isNoResponders = (msg: Msg) => msg.data.length === 0 && msg.subject.startsWith('_INBOX.') && msg.headers?.code === 503

const bytesOf = (data: Uint8Array | string | undefined): Uint8Array => (data === undefined ? new Uint8Array() : typeof data === 'string' ? encoder.encode(data) : data)

/**
 * The connection every bus of an instance uses: with a signer, every message published (and
 * every reply sent through a received message's `respond`) is signed, and every subscription
 * hears only messages with a valid, fresh signature, each once (a copy replayed within the time
 * window is refused: `ReplayGuard`); the rest are dropped and counted. Without
 * one (no CLUSTER_KEY: development) the connection is returned as it is.
 *
 * `request` is refused on a signed connection: the client's own request-reply cannot skip a
 * forged reply to wait for the real one (NatsRpc does its own request-reply over `subscribe`).
 */
export function signedConnection(nc: NatsConnection, signer: BusSigner | undefined): NatsConnection {
  if (!signer) return nc
  const publish = (subject: string, data?: Uint8Array | string, options?: Partial<PublishOptions>): void => {
    const bytes = bytesOf(data)
    const headers = signer.sign(subject, options?.reply, bytes, options?.headers ?? natsHeaders())
    nc.publish(subject, bytes, { ...options, headers })
  }
  /** Replies through the message are signed too (an own property: cheaper than a wrapper object per message). */
  const signedMsg = (msg: Msg): Msg => {
    msg.respond = (data?: Uint8Array, options?: PublishOptions): boolean => {
      if (!msg.reply) return false
      publish(msg.reply, data, options)
      return true
    }
    return msg
  }
  const subscribe = (subject: string, options?: SubscriptionOptions): Subscription => {
    const callback = options?.callback
    if (!callback) throw new Error('a signed NATS connection needs a callback on every subscription')
    // Each subscription hears each message once: a second copy on it is a replay.
    const replays = signer.replayGuard()
    return nc.subscribe(subject, {
      ...options,
      callback: (err, msg) => {
        if (err) return callback(err, msg)
        if (isNoResponders(msg)) return callback(null, msg)
        if (signer.accept(msg, replays)) callback(null, signedMsg(msg))
      },
    })
  }
  const request = (): never => {
    throw new Error('request() is not available on a signed NATS connection; use NatsRpc')
  }
  return new Proxy(nc, {
    get(target, prop) {
      if (prop === 'publish') return publish
      if (prop === 'subscribe') return subscribe
      if (prop === 'request' || prop === 'requestMany') return request
      const value: unknown = Reflect.get(target, prop, target)
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value
    },
  })
}

/** The signer of CLUSTER_KEY (counting refusals in `registry`), or undefined without a key (development: unsigned). */
export function busSigner(clusterKey: string | undefined, registry?: Registry): BusSigner | undefined {
  return clusterKey ? new BusSigner(clusterKey, busRejectedCounter(registry)) : undefined
}
