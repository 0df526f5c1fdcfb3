/**
 * The machines of the fleet bench, a share of them per child process (each process needs one
 * descriptor per link, and the open-file limit is 20,000): bare links (bench-raw-link.ts) spread
 * round-robin over the instances, a heartbeat every period with the starts spread evenly over it,
 * an answer to every forwarded request, and a re-link to the next instance of the machine's own
 * list when its link closes, after the SDK's back-off (a first retry within 500 ms).
 */
import { fork, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { RawLink, sourceAddress } from './bench-raw-link.js'
import { Backoff } from '@fleetgate/device-agent'

const HERE = fileURLToPath(import.meta.url)
/** Links being opened at once per process (each instance lets 1,000 sockets wait for registration). */
const OPENING_AT_ONCE = 300
/** Heartbeats go out from one ticker per process; each tick beats one slot of the links. */
const TICK_MS = 250
/** A machine gives up re-linking after this many attempts in a row (bounds every loop). */
const MAX_ATTEMPTS = 40
/** Attempts of each machine's first link. */
const OPEN_ATTEMPTS = 5
const POSITION = { x: 120.5, y: 80.25, z: 10, r: 90 }

export const fleetDeviceId = (i: number) => `fleet-${String(i).padStart(6, '0')}`

export interface DeviceShare {
  linkUrls: string[]
  /** Global index of the first machine, and how many this process runs. */
  from: number
  count: number
  heartbeatMs: number
}

/** What a device process reports when asked. */
export interface DeviceReport {
  /** Registered links now open, by instance index. */
  linkedPerInstance: number[]
  /** Links that closed since the last mark, and of those how many registered again. */
  droppedSinceMark: number
  relinkedSinceMark: number
  /** Epoch ms of the last re-registration since the mark. */
  lastRelinkAt: number
  /** Connects refused or closed before registering (1013, connection refused…), since the mark. */
  refusedSinceMark: number
  /** Machines that gave up after MAX_ATTEMPTS. */
  gaveUp: number
  requestsAnswered: number
  /** Refused first links tried again. */
  openRetries: number
}

type Question = { op: 'share'; share: DeviceShare } | { op: 'open' } | { op: 'report' } | { op: 'mark' }
type FromChild = { ready: true } | { opened: { seconds: number; failed: number } } | { report: DeviceReport } | { error: string }

class Machine {
  link: RawLink | undefined
  registered = false
  /** Position in this machine's list of instances. */
  position = 0
  attempts = 0
  /** The SDK's own reconnect policy (full jitter, 500 ms doubling to 30 s), reset once linked. */
  backoff = new Backoff()
  droppedAfterMark = false

  constructor(
    readonly index: number,
    readonly order: number[],
  ) {}

  get instance(): number {
    return this.order[this.position % this.order.length]!
  }
}

class DeviceFleet {
  readonly machines: Machine[]
  private marked = false
  private stopping = false
  readonly report: DeviceReport

  constructor(private readonly share: DeviceShare) {
    const n = share.linkUrls.length
    this.machines = Array.from({ length: share.count }, (_, k) => {
      const i = share.from + k
      const home = i % n
      // The machines of one instance fall back on the others evenly, not all on the next one.
      const shift = Math.floor(i / n) % Math.max(1, n - 1)
      const others = Array.from({ length: n - 1 }, (_, j) => (home + 1 + ((shift + j) % (n - 1))) % n)
      return new Machine(i, [home, ...others])
    })
    this.report = { linkedPerInstance: new Array<number>(n).fill(0), droppedSinceMark: 0, relinkedSinceMark: 0, lastRelinkAt: 0, refusedSinceMark: 0, gaveUp: 0, requestsAnswered: 0, openRetries: 0 }
  }

  /** Opens every link once; resolves with the seconds it took and how many failed. */
  async open(): Promise<{ seconds: number; failed: number }> {
    const started = performance.now()
    let next = 0
    let failed = 0
    const opener = async () => {
      while (next < this.machines.length) {
        const m = this.machines[next++]!
        // A refusal (1013 when 1,000 sockets already wait, 1011 when the claim is slow) is tried again, as a machine would.
        let attempt = 0
        while (!(await this.connect(m)) && ++attempt < OPEN_ATTEMPTS) {
          this.report.openRetries++
          await new Promise((resolve) => setTimeout(resolve, 250 + Math.random() * 1000))
        }
        if (attempt === OPEN_ATTEMPTS) failed++
      }
    }
    await Promise.all(Array.from({ length: Math.min(OPENING_AT_ONCE, this.machines.length) }, opener))
    this.startHeartbeats()
    return { seconds: (performance.now() - started) / 1000, failed }
  }

  mark(): void {
    this.marked = true
    Object.assign(this.report, { droppedSinceMark: 0, relinkedSinceMark: 0, lastRelinkAt: 0, refusedSinceMark: 0 })
    for (const m of this.machines) m.droppedAfterMark = false
  }

  stop(): void {
    this.stopping = true
    for (const m of this.machines) m.link?.socket.destroy()
  }

  /** Links one machine to its current instance; resolves true once registered, false when the link closed first. */
  private connect(m: Machine): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const instance = m.instance
      const id = fleetDeviceId(m.index)
      const link: RawLink = new RawLink(new URL(this.share.linkUrls[instance]!), sourceAddress(m.index), (text) => {
        const frame = JSON.parse(text) as { type: string; id?: string }
        if (frame.type === 'request') {
          this.report.requestsAnswered++
          return link.send(JSON.stringify({ type: 'response', id: frame.id, status: 200, data: POSITION }))
        }
        if (frame.type !== 'registered' || m.registered) return
        m.registered = true
        m.attempts = 0
        m.backoff = new Backoff()
        this.report.linkedPerInstance[instance]!++
        if (m.droppedAfterMark) {
          this.report.relinkedSinceMark++
          this.report.lastRelinkAt = Date.now()
          m.droppedAfterMark = false
        }
        resolve(true)
      })
      m.link = link
      link.socket.once('upgraded', () => link.send(JSON.stringify({ type: 'register', device_id: id, key: `fleet-bench-key-${id}`, hostname: id, version: 'bench' })))
      link.socket.on('error', () => undefined)
      link.socket.once('close', () => {
        const wasRegistered = m.registered
        m.registered = false
        if (wasRegistered) this.report.linkedPerInstance[instance]!--
        resolve(wasRegistered)
        if (this.stopping || m.link !== link) return
        m.link = undefined
        if (wasRegistered && this.marked && !m.droppedAfterMark) {
          m.droppedAfterMark = true
          this.report.droppedSinceMark++
        }
        if (!wasRegistered && this.marked) this.report.refusedSinceMark++
        this.relink(m, wasRegistered)
      })
    })
  }

  /** Links again to the next instance of the machine's list after the SDK's back-off delay. */
  private relink(m: Machine, wasRegistered: boolean): void {
    if (!wasRegistered && this.marked === false) return // the first opening counts its failures itself
    if (++m.attempts > MAX_ATTEMPTS) {
      this.report.gaveUp++
      return
    }
    m.position++
    const jitterMs = m.backoff.next()
    setTimeout(() => {
      if (!this.stopping) void this.connect(m)
    }, jitterMs)
  }

  /** Each machine beats once per period, in the slot of its index: the beats spread evenly over the period. */
  private startHeartbeats(): void {
    const slots = Math.max(1, Math.round(this.share.heartbeatMs / TICK_MS))
    let tick = 0
    setInterval(() => {
      const slot = tick++ % slots
      for (let k = slot; k < this.machines.length; k += slots) {
        const m = this.machines[k]!
        if (m.registered) m.link!.send(JSON.stringify({ type: 'heartbeat', status: { state: 'idle', uptime_s: Math.round(process.uptime()) } }))
      }
    }, TICK_MS)
  }
}

export interface DeviceProcess {
  pid: number
  /** Opens every link of the share; resolves with the seconds it took. */
  open(): Promise<{ seconds: number; failed: number }>
  report(): Promise<DeviceReport>
  /** From now on, count links that drop and re-link. */
  mark(): Promise<void>
  stop(): Promise<void>
}

export async function startDeviceProcess(share: DeviceShare): Promise<DeviceProcess> {
  const child: ChildProcess = fork(HERE, ['--fleet-devices'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  const exited = once(child, 'exit')
  // Questions may overlap (a report while the links open): each answer carries its question's number.
  const waiting = new Map<number, (answer: FromChild) => void>()
  let asked = 0
  child.on('message', ({ seq, answer }: { seq: number; answer: FromChild }) => {
    waiting.get(seq)?.(answer)
    waiting.delete(seq)
  })
  void exited.then(() => {
    for (const answered of waiting.values()) answered({ error: 'device process exited' })
  })
  const ask = async (question: Question): Promise<FromChild> => {
    const seq = ++asked
    const answer = new Promise<FromChild>((resolve) => waiting.set(seq, resolve))
    child.send({ seq, question })
    const got = await answer
    if ('error' in got) throw new Error(got.error)
    return got
  }
  await ask({ op: 'share', share })
  return {
    pid: child.pid!,
    open: async () => ((await ask({ op: 'open' })) as { opened: { seconds: number; failed: number } }).opened,
    report: async () => ((await ask({ op: 'report' })) as { report: DeviceReport }).report,
    mark: async () => void (await ask({ op: 'mark' })),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return
      child.kill('SIGTERM')
      await exited
    },
  }
}

if (process.argv[2] === '--fleet-devices') {
  let fleet: DeviceFleet | undefined
  process.on('message', ({ seq, question }: { seq: number; question: Question }) => {
    const send = (answer: FromChild) => process.send!({ seq, answer })
    if (question.op === 'share') {
      fleet = new DeviceFleet(question.share)
      send({ ready: true })
    }
    if (question.op === 'open') fleet!.open().then((opened) => send({ opened }), (err: Error) => send({ error: err.message }))
    if (question.op === 'mark') {
      fleet!.mark()
      send({ ready: true })
    }
    if (question.op === 'report') send({ report: fleet!.report })
  })
  const stop = () => {
    fleet?.stop()
    process.exit(0)
  }
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)
  // The bench went away without stopping us: leave nothing behind.
  process.on('disconnect', stop)
}
