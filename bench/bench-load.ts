/**
 * Load generators of the proxy benchmark, run in a child process (`fork(this file)`) so they
 * never share the server's event loop. The parent sends one job; the child answers with a
 * `LoadResult` and exits. Every contender gets the same concurrency and the same layout:
 * this process → (server | broker) → a device process.
 */
import { connect as netConnect, type Socket } from 'node:net'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { fork } from 'node:child_process'
import { once } from 'node:events'

export type LoadJob =
  | { kind: 'http'; url: string; connections: number; seconds: number; headers: Record<string, string>; requests?: number; noWarmup?: boolean }
  | { kind: 'http-open'; url: string; rate: number; seconds: number; headers: Record<string, string> }
  | { kind: 'mqtt'; url: string; topic: string; concurrency: number; seconds: number; shared: boolean; requests?: number; noWarmup?: boolean }
  | { kind: 'nats'; url: string; subject: string; concurrency: number; seconds: number; shared: boolean }

/**
 * `requests`, where a job has it: stop after that many requests rather than after `seconds`.
 * `noWarmup`: skip the 1 s warm-up run (whose requests still in flight when it stops would
 * overlap the measured run).
 */
export interface LoadResult {
  rps: number
  total: number
  p50: number
  p99: number
  max: number
  /** Answers other than 2xx (HTTP) or malformed answers. */
  bad: number
  /** The open loop's non-2xx answers by HTTP status. */
  badStatuses?: Record<string, number>
  errors: number
}

const HERE = fileURLToPath(import.meta.url)

/** Runs one job in a fresh child process. */
export async function runLoad(job: LoadJob): Promise<LoadResult> {
  const child = fork(HERE, ['--load-child'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  child.send(job)
  const [result] = (await once(child, 'message')) as [LoadResult | { error: string }]
  if (child.exitCode === null) await once(child, 'exit')
  if ('error' in result) throw new Error(`load generator: ${result.error}`)
  return result
}

/** Latencies in ms, kept in a growable Float64Array (millions of samples stay cheap). */
class Latencies {
  private data = new Float64Array(1 << 16)
  size = 0
  add(ms: number): void {
    if (this.size === this.data.length) {
      const bigger = new Float64Array(this.data.length * 2)
      bigger.set(this.data)
      this.data = bigger
    }
    this.data[this.size++] = ms
  }
  summary(seconds: number, bad: number, errors: number): LoadResult {
    const sorted = this.data.subarray(0, this.size).sort()
    const at = (q: number) => (this.size === 0 ? NaN : round(sorted[Math.min(this.size - 1, Math.floor(q * this.size))]!))
    return { rps: Math.round(this.size / seconds), total: this.size, p50: at(0.5), p99: at(0.99), max: at(1), bad, errors }
  }
}

const round = (ms: number) => Math.round(ms * 100) / 100

/**
 * autocannon drives the load; latencies come from its per-response event, in fractions of a
 * millisecond (its own percentiles are whole milliseconds, too coarse for sub-millisecond routes).
 */
async function httpClosed(job: Extract<LoadJob, { kind: 'http' }>): Promise<LoadResult> {
  type Result = { requests: { total: number }; non2xx: number; errors: number; timeouts: number; duration: number }
  type Instance = Promise<Result> & { on(event: 'response', listener: (client: unknown, status: number, bytes: number, ms: number) => void): void }
  const autocannon = createRequire(import.meta.url)('autocannon') as (o: Record<string, unknown>) => Instance
  if (!job.noWarmup) await autocannon({ url: job.url, connections: job.connections, duration: 1, headers: job.headers })
  const latencies = new Latencies()
  const length = job.requests ? { amount: job.requests } : { duration: job.seconds }
  const run = autocannon({ url: job.url, connections: job.connections, ...length, headers: job.headers })
  run.on('response', (_client, status, _bytes, ms) => {
    if (status >= 200 && status < 300) latencies.add(ms)
  })
  const r = await run
  return { ...latencies.summary(r.duration, r.non2xx, r.errors + r.timeouts), rps: Math.round(r.requests.total / r.duration), total: r.requests.total }
}

/**
 * Open loop: request i is due at start + i / rate, whatever happened to earlier ones, and its
 * latency counts from that due time (no coordinated omission). A minimal HTTP/1.1 client on
 * keep-alive sockets, one request per socket at a time, as many sockets as needed (≤ 1,000).
 * A socket idle for `STALE_AFTER_MS` is closed rather than reused, as HTTP clients honour the
 * server's `Keep-Alive: timeout=5`: reusing it raced the server's close, and the request was lost.
 */
/** Below the 5 s keep-alive time-out fleetgate advertises, by a margin for the close in flight. */
const STALE_AFTER_MS = 4000

async function httpOpen(job: Extract<LoadJob, { kind: 'http-open' }>): Promise<LoadResult> {
  const url = new URL(job.url)
  const head = Object.entries(job.headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')
  const request = Buffer.from(`GET ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\n${head}\r\n`)
  const total = Math.round(job.rate * job.seconds)
  const latencies = new Latencies()
  const backlog: number[] = []
  const idle: Conn[] = []
  let opened = 0
  let finished = 0
  let bad = 0
  const badStatuses: Record<string, number> = {}
  let errors = 0
  let done!: () => void
  const allDone = new Promise<void>((resolve) => (done = resolve))
  const settle = () => {
    if (++finished === total) done()
  }

  class Conn {
    private readonly socket: Socket
    private due = 0
    /** When the socket last finished a request. */
    idleSince = performance.now()
    private buffered: Buffer | undefined
    readonly connected: Promise<unknown>
    constructor() {
      opened++
      this.socket = netConnect(Number(url.port), url.hostname)
      this.connected = once(this.socket, 'connect')
      this.socket.setNoDelay(true)
      this.socket.on('data', (chunk) => this.onData(chunk))
      this.socket.on('error', () => undefined)
      this.socket.on('close', () => {
        opened--
        const at = idle.indexOf(this)
        if (at >= 0) idle.splice(at, 1)
        if (this.due !== 0) {
          errors++
          this.due = 0
          settle()
        }
      })
    }
    close(): void {
      this.socket.destroy()
    }
    send(due: number): void {
      this.due = due
      this.buffered = undefined
      this.socket.write(request)
    }
    private onData(chunk: Buffer): void {
      const data = this.buffered ? Buffer.concat([this.buffered, chunk]) : chunk
      const end = data.indexOf('\r\n\r\n')
      if (end < 0) return void (this.buffered = data)
      const headers = data.toString('latin1', 0, end)
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(headers)?.[1] ?? 0)
      if (data.length < end + 4 + length) return void (this.buffered = data)
      this.buffered = undefined
      latencies.add(performance.now() - this.due)
      if (headers.charCodeAt(9) !== 0x32) {
        bad++
        const status = headers.slice(9, 12)
        badStatuses[status] = (badStatuses[status] ?? 0) + 1
      }
      this.due = 0
      this.idleSince = performance.now()
      settle()
      const next = backlog.shift()
      if (next !== undefined) this.send(next)
      else idle.push(this)
    }
  }

  /** The most recently used idle socket that is not stale; stale ones are closed. */
  const takeIdle = (): Conn | undefined => {
    const now = performance.now()
    for (let conn = idle.pop(); conn; conn = idle.pop()) {
      if (now - conn.idleSince < STALE_AFTER_MS) return conn
      conn.close()
    }
    return undefined
  }
  const dispatch = (due: number) => {
    const conn = takeIdle()
    if (conn) conn.send(due)
    else if (opened < 1000) new Conn().send(due)
    else backlog.push(due)
  }
  // Sockets opened up front: a burst of connects during the run overflows the listen backlog
  // and costs a 1 s SYN retransmission, which is the client's fault, not the server's.
  const warm = Array.from({ length: Math.min(1000, Math.ceil(job.rate / 20)) }, () => new Conn())
  await Promise.all(warm.map((c) => c.connected))
  idle.push(...warm)
  const start = performance.now()
  let sent = 0
  const tick = () => {
    const due = Math.min(total, Math.floor(((performance.now() - start) * job.rate) / 1000) + 1)
    while (sent < due) dispatch(start + (sent++ * 1000) / job.rate)
    if (sent < total) setTimeout(tick, 1)
  }
  tick()
  const giveUp = setTimeout(done, (job.seconds + 15) * 1000)
  await allDone
  clearTimeout(giveUp)
  errors += total - finished
  return { ...latencies.summary(job.seconds, bad, errors), badStatuses }
}

/** Closed loop over any request/response transport: `concurrency` requests always in flight. */
async function closedLoop(seconds: number, concurrency: number, request: (worker: number) => Promise<boolean>, limit = Infinity): Promise<LoadResult> {
  const latencies = new Latencies()
  let bad = 0
  let errors = 0
  let issued = 0
  const end = performance.now() + seconds * 1000
  const worker = async (_: unknown, index: number) => {
    while (performance.now() < end && issued++ < limit) {
      const started = performance.now()
      try {
        if (!(await request(index))) bad++
        latencies.add(performance.now() - started)
      } catch {
        errors++
      }
    }
  }
  const started = performance.now()
  await Promise.all(Array.from({ length: concurrency }, worker))
  return latencies.summary((performance.now() - started) / 1000, bad, errors)
}

/**
 * One request/response client: `shared` = all requesters multiplex one connection (one reply
 * topic); otherwise each requester has its own connection, as each HTTP requester has.
 */
async function mqttClient(url: string, topic: string) {
  const { connectAsync } = await import('mqtt')
  const client = await connectAsync(url, { clean: true, reconnectPeriod: 0 })
  const replyTopic = `${topic}/reply/${process.pid}/${client.options.clientId}`
  await client.subscribeAsync(replyTopic, { qos: 0 })
  const waiting = new Map<number, (ok: boolean) => void>()
  client.on('message', (_topic, payload) => {
    const answer = JSON.parse(payload.toString()) as { id: number; status: number }
    const resolve = waiting.get(answer.id)
    waiting.delete(answer.id)
    resolve?.(answer.status === 200)
  })
  let nextId = 0
  const request = () =>
    new Promise<boolean>((resolve) => {
      const id = ++nextId
      waiting.set(id, resolve)
      client.publish(topic, JSON.stringify({ id, reply: replyTopic, method: 'GET', path: '/hardware/position' }), { qos: 0 })
    })
  return { request, end: () => client.endAsync() }
}

async function mqttClosed(job: Extract<LoadJob, { kind: 'mqtt' }>): Promise<LoadResult> {
  const clients = await Promise.all(Array.from({ length: job.shared ? 1 : job.concurrency }, () => mqttClient(job.url, job.topic)))
  const request = (worker: number) => clients[worker % clients.length]!.request()
  if (!job.noWarmup) await closedLoop(1, job.concurrency, request)
  const result = await closedLoop(job.requests ? Infinity : job.seconds, job.concurrency, request, job.requests)
  await Promise.all(clients.map((c) => c.end()))
  return result
}

async function natsClosed(job: Extract<LoadJob, { kind: 'nats' }>): Promise<LoadResult> {
  const { connect } = await import('nats')
  const connections = await Promise.all(Array.from({ length: job.shared ? 1 : job.concurrency }, () => connect({ servers: job.url })))
  const payload = JSON.stringify({ method: 'GET', path: '/hardware/position' })
  const request = async (worker: number) => {
    const msg = await connections[worker % connections.length]!.request(job.subject, payload, { timeout: 10_000 })
    return (JSON.parse(msg.string()) as { status: number }).status === 200
  }
  await closedLoop(1, job.concurrency, request)
  const result = await closedLoop(job.seconds, job.concurrency, request)
  await Promise.all(connections.map((nc) => nc.close()))
  return result
}

if (process.argv[2] === '--load-child') {
  // The benchmark process ended without waiting for the result (Ctrl-C, a crash): stop too.
  process.on('disconnect', () => process.exit(0))
  process.once('message', (job: LoadJob) => {
    const run = job.kind === 'http' ? httpClosed(job) : job.kind === 'http-open' ? httpOpen(job) : job.kind === 'mqtt' ? mqttClosed(job) : natsClosed(job)
    run.then(
      (result) => process.send!(result, () => process.exit(0)),
      (err: Error) => process.send!({ error: err.message }, () => process.exit(1)),
    )
  })
}
