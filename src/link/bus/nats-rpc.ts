import { randomUUID } from 'node:crypto'
import { ErrorCode, type Msg, type NatsConnection, type Subscription } from 'nats'
import { NatsConnectionWatch } from '../../nats/connection-watch.js'
import { natsSubjects } from './nats-subjects.js'

/** Placeholder sent instead of a message larger than max_payload; the receiver fetches the chunks. */
interface BlobRef {
  $blob: { subject: string; size: number; chunks: number }
}

const BLOB_REF_START = '{"$blob":'
const HEADROOM = 4096
/** How long the chunks of a large message stay available to be fetched. */
const BLOB_TTL_MS = 60_000
/** The smallest chunk a sender cuts: a peer's chunk count can be checked against it. */
const MIN_CHUNK = 64 * 1024
/** The largest message expected: a 16 MiB device frame (or forwarded body) plus its envelope. */
export const MAX_RPC_MESSAGE_BYTES = 17 * 1024 * 1024

/**
 * JSON request-reply over NATS. Messages above the server's `max_payload` (1 MiB by default;
 * forwarded bodies may reach 16 MiB) travel as chunks the receiver fetches one by one.
 */
export class NatsRpc {
  /** Requests and replies issued during this turn of the event loop, sent together at its end. */
  private outgoing: (() => void)[] = []
  /**
   * Our own request-reply over one wildcard inbox: the client's `request` builds two Error
   * objects (stack traces) per call even when it succeeds, a large share of a forwarded call's CPU.
   */
  private readonly inbox = `_INBOX.fleetgate.${randomUUID()}.`
  private inboxSubscription: Subscription | undefined
  private readonly waiting = new Map<string, { resolve(msg: Msg): void; reject(err: Error): void; timer: NodeJS.Timeout }>()
  private nextToken = 0
  /** Whether the server can be reached: requests are refused at once while it cannot. */
  readonly connection: NatsConnectionWatch

  constructor(
    private readonly nc: NatsConnection,
    /** A large message announced bigger than this is refused before anything is fetched. */
    private readonly maxMessageBytes = MAX_RPC_MESSAGE_BYTES,
  ) {
    this.connection = new NatsConnectionWatch(nc)
    // A reply cannot arrive while the connection is down, and one sent meanwhile may be lost:
    // the requests waiting fail now rather than at their time-out.
    this.connection.onChange((connected) => {
      if (!connected) this.failWaiting(ErrorCode.Disconnect, 'NATS connection lost')
    })
  }

  request(subject: string, value: unknown, timeoutMs: number): Promise<unknown> {
    return this.requestText(subject, JSON.stringify(value ?? null), timeoutMs)
  }

  /** `request` with the message already written: `text` is sent as it is (the reply is JSON). */
  async requestText(subject: string, text: string, timeoutMs: number): Promise<unknown> {
    const reply = await this.requestRaw(subject, this.encode(text), timeoutMs)
    return this.decode(reply.data, timeoutMs)
  }

  /**
   * Rejects with `code` NoResponders (nobody subscribed: the server's empty 503 reply), Timeout,
   * or Disconnect (the server cannot be reached now: at once, rather than buffered by the
   * client until it reconnects and timed out meanwhile).
   */
  private requestRaw(subject: string, data: Uint8Array, timeoutMs: number): Promise<Msg> {
    if (!this.connection.connected) return Promise.reject(natsError(ErrorCode.Disconnect, 'NATS is unreachable'))
    this.inboxSubscription ??= this.nc.subscribe(`${this.inbox}*`, { callback: (err, msg) => (err ? undefined : this.settle(msg)) })
    const token = (++this.nextToken).toString(36)
    return new Promise<Msg>((resolve, reject) => {
      const timer = setTimeout(() => {
        if (this.waiting.delete(token)) reject(natsError(ErrorCode.Timeout, 'request timed out'))
      }, timeoutMs)
      this.waiting.set(token, { resolve, reject, timer })
      this.send(() => this.nc.publish(subject, data, { reply: this.inbox + token }))
    })
  }

  private settle(msg: Msg): void {
    const token = msg.subject.slice(this.inbox.length)
    const entry = this.waiting.get(token)
    if (!entry) return
    this.waiting.delete(token)
    clearTimeout(entry.timer)
    if (msg.data.length === 0 && msg.headers?.code === 503) entry.reject(natsError(ErrorCode.NoResponders, 'no responders'))
    else entry.resolve(msg)
  }

  /** Stops listening for replies; requests still waiting fail as timed out. */
  close(): void {
    this.inboxSubscription?.unsubscribe()
    this.failWaiting(ErrorCode.Timeout, 'bus closed')
  }

  private failWaiting(code: string, message: string): void {
    for (const [token, entry] of this.waiting) {
      clearTimeout(entry.timer)
      this.waiting.delete(token)
      entry.reject(natsError(code, message))
    }
  }

  /** Fire and forget; `flush` on the connection confirms the server has it. */
  publish(subject: string, value: unknown): void {
    this.nc.publish(subject, this.encodeValue(value))
  }

  /** Answers every message on `subject` (which may hold wildcards) with `handler`'s result; `handler` gets the message's own subject. */
  serve(subject: string, handler: (value: unknown, subject: string) => Promise<unknown>, onError: (err: unknown) => void): Subscription {
    return this.serveText(subject, (text, subject) => handler(JSON.parse(text), subject), onError)
  }

  /** `serve`, handing `handler` each message's text as it came, unparsed (its result is still sent as JSON). */
  serveText(subject: string, handler: (text: string, subject: string) => Promise<unknown>, onError: (err: unknown) => void): Subscription {
    return this.nc.subscribe(subject, {
      callback: (err, msg) => {
        if (err) return onError(err)
        void this.answer(msg, handler).catch(onError)
      },
    })
  }

  private async answer(msg: Msg, handler: (text: string, subject: string) => Promise<unknown>): Promise<void> {
    const result = await handler(await this.decodeText(msg.data, BLOB_TTL_MS), msg.subject)
    if (!msg.reply) return
    const data = this.encodeValue(result)
    this.send(() => msg.respond(data))
  }

  /**
   * The client writes to its socket once per microtask checkpoint; under load each forwarded
   * call would cost a write (a syscall) of its own. Holding them to the end of the turn lets
   * every call and reply of the turn leave in one write.
   */
  private send(op: () => void): void {
    this.outgoing.push(op)
    if (this.outgoing.length > 1) return
    setImmediate(() => {
      const ops = this.outgoing
      this.outgoing = []
      for (const run of ops) run()
    })
  }

  private get chunkSize(): number {
    return Math.max(MIN_CHUNK, (this.nc.info?.max_payload ?? 1024 * 1024) - HEADROOM)
  }

  private encodeValue(value: unknown): Uint8Array {
    return this.encode(JSON.stringify(value ?? null))
  }

  /** The message's bytes, or when they exceed the server's max_payload a reference to their chunks. */
  private encode(text: string): Uint8Array {
    const bytes = Buffer.from(text, 'utf8')
    const size = this.chunkSize
    if (bytes.length <= size) return bytes
    const chunks = Math.ceil(bytes.length / size)
    const subject = natsSubjects.blob(randomUUID())
    const sub = this.nc.subscribe(subject, {
      callback: (_err, msg) => {
        const index = Number(new TextDecoder().decode(msg.data))
        if (Number.isInteger(index) && index >= 0 && index < chunks) msg.respond(bytes.subarray(index * size, (index + 1) * size))
        else msg.respond(new Uint8Array())
        if (index === chunks - 1) sub.unsubscribe()
      },
    })
    setTimeout(() => sub.unsubscribe(), BLOB_TTL_MS).unref()
    const ref: BlobRef = { $blob: { subject, size: bytes.length, chunks } }
    return Buffer.from(JSON.stringify(ref), 'utf8')
  }

  /**
   * Trusts nothing the peer announces: the size must be within the configured maximum, the chunk
   * count must fit that size, and fetching stops as soon as more bytes arrived than announced.
   */
  private async decode(data: Uint8Array, timeoutMs: number): Promise<unknown> {
    return JSON.parse(await this.decodeText(data, timeoutMs))
  }

  /** The message's text; a reference to chunks (which `encode` writes starting `{"$blob":`) is fetched. */
  private async decodeText(data: Uint8Array, timeoutMs: number): Promise<string> {
    const text = Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8')
    if (!text.startsWith(BLOB_REF_START)) return text
    const value: unknown = JSON.parse(text)
    if (!isBlobRef(value)) return text
    const { subject, size, chunks } = value.$blob
    if (!Number.isSafeInteger(size) || size < 1 || size > this.maxMessageBytes) {
      throw new Error(`large message of ${String(size)} bytes refused (at most ${this.maxMessageBytes})`)
    }
    if (!Number.isSafeInteger(chunks) || chunks < 1 || chunks > Math.ceil(size / MIN_CHUNK)) {
      throw new Error(`large message announced in ${String(chunks)} chunks for ${size} bytes; refused`)
    }
    const parts: Uint8Array[] = []
    let received = 0
    for (let i = 0; i < chunks; i++) {
      // Over our own request-reply: on a signed connection a forged chunk is skipped like any forged reply.
      const part = (await this.requestRaw(subject, Buffer.from(String(i)), timeoutMs)).data
      received += part.length
      if (received > size) throw new Error(`large message exceeds its announced ${size} bytes; refused`)
      parts.push(part)
    }
    if (received !== size) throw new Error(`large message arrived incomplete (${received} of ${size} bytes)`)
    return Buffer.concat(parts, received).toString('utf8')
  }
}

/** An error the device bus maps like the client's own (by `code`). */
const natsError = (code: string, message: string) => Object.assign(new Error(message), { code })

function isBlobRef(value: unknown): value is BlobRef {
  return typeof value === 'object' && value !== null && '$blob' in value && typeof (value as BlobRef).$blob?.subject === 'string'
}
