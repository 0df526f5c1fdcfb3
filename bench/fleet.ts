/**
 * `npm run bench -- fleet [--links 100000] [--instances 6] [--heartbeat-s 20] [--memory-max MiB]`:
 * a fleet on several instances (issue #25). `--memory-max` starts each instance in a memory
 * cgroup of that size, as a deployment's `MemoryMax=` would (bench-memory-limit.ts). Everything
 * runs in this process tree and is gone at the end (also on an error or SIGINT): a PostgreSQL of
 * its own (initdb in a temporary directory, with pg_stat_statements), a nats-server of its own
 * (with its monitoring port), N `fleetgate serve` processes, and device processes
 * (bench-fleet-devices.ts) each running a share of the links.
 *
 * Measured, each beside its target: the aggregate registration rate; RSS per link of every
 * instance after a full heartbeat round (RSS as the OS sees it, no forced GC); an idle window:
 * CPU of all instances, PostgreSQL statements/s and NATS messages/s; the CPU of a registration
 * itself (instances, PostgreSQL), less what the links already up spent on heartbeats meanwhile
 * (the idle window's CPU per link-second times the link-seconds of the registration: at a few
 * hundred registrations a second that is half the CPU spent); 1,000 random requests
 * (random machine, random instance) while the fleet heartbeats; then a SIGKILL of the instance
 * holding the most links: time until its machines re-linked, until presence is true on every
 * other instance, and one link per machine after (devices, /metrics and the database agree).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import http from 'node:http'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { freePort } from '../src/cluster/local-cluster.js'
import { startNatsServer, type NatsServer } from '../src/cluster/nats-server.js'
import { startPostgresServer, type PostgresServer } from '../src/cluster/postgres-server.js'
import { PRESENCE_DEFAULTS } from '../src/gateway/devices/instance-presence.js'
import { option } from './bench-options.js'
import { fleetDeviceId, startDeviceProcess, type DeviceProcess, type DeviceReport } from './bench-fleet-devices.js'
import { cpuSeconds, eventLoopMaxMs, linksOf, machineCpu, gcTotals, openDescriptors, natsCounters, openFileLimit, postgresCounters, postgresCpuSeconds, rssBytes, scrapeMs, topStatements, youngGenerationBytes } from './bench-fleet-probes.js'
import { memoryLimit, type MemoryLimit } from './bench-memory-limit.js'
import { BENCH_NODE_FLAGS } from './node-flags.js'
import { RESERVED_DESCRIPTORS } from '../src/link/link-options.js'

const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../src/cli/main.js')
const ADMIN = { username: 'bench', password: 'bench-password' }
/** Links per device process: one descriptor each, under the open-file limit of 20,000. */
const LINKS_PER_DEVICE_PROCESS = 12_500
const REQUESTS = 1000
const REQUESTS_IN_FLIGHT = 20
const REQUESTS_IN_FLIGHT_LIGHT = 2
const REQUESTS_WARM_UP = 100
/** The requests stop being sent after this long (each waits at most 15 s). */
const REQUESTS_WITHIN_MS = 120_000
const REQUEST_TIMEOUT_MS = 15_000
/**
 * An instance holds a descriptor per link, and after a kill a survivor takes a sixth more: a
 * deployment raises the open-file limit (systemd `LimitNOFILE`, docs/deploy.md), and so does
 * this bench through prlimit where it may (root); else the instances inherit this process's.
 */
const INSTANCE_OPEN_FILES = 65_536
const raisedLimit = spawnSync('prlimit', [`--nofile=${INSTANCE_OPEN_FILES}:${INSTANCE_OPEN_FILES}`, '--', 'true']).status === 0
const TARGETS = {
  registrationsPerS: 3000,
  rssKbPerLink: 12,
  idleCores: 1,
  statementsPerS: 500,
  requestP99Ms: 50,
  relinkS: 30,
  presenceS: 15,
  /** CPU of a registration itself, in ms: all instances, and PostgreSQL (issue #36). */
  instanceMsPerRegistration: 0.35,
  postgresMsPerRegistration: 0.15,
}

const started = Date.now()
const say = (line: string) => console.log(`[${((Date.now() - started) / 1000).toFixed(1).padStart(6)} s] ${line}`)
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const verdict = (ok: boolean) => (ok ? 'OK' : 'MISSED')
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0)
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? NaN

/**
 * Steps that undo what was started, run last-first, each once, whatever happened. Something
 * started after the clean-up began (a set-up still running when Ctrl-C came) is undone at once.
 */
class Cleanup {
  private readonly steps: { name: string; run: () => Promise<unknown> }[] = []
  private started = false
  get begun(): boolean {
    return this.started
  }
  add(name: string, run: () => Promise<unknown>): void {
    if (this.started) return void run().catch(() => undefined)
    this.steps.push({ name, run })
  }
  async run(): Promise<void> {
    this.started = true
    for (let step = this.steps.pop(); step; step = this.steps.pop()) {
      await step.run().catch((err: Error) => console.error(`cleanup: ${step!.name} failed: ${err.message}`))
    }
  }
}

interface Instance {
  id: string
  url: string
  child: ChildProcess
  pid: number
  exited: Promise<unknown>
  /** The last lines it printed, for an error message. */
  tail: string[]
}

/** Starts one instance, put in `started` at once (the clean-up stops them all together). */
async function startInstance(id: string, env: Record<string, string>, started: Instance[], cleanup: Cleanup, memory?: MemoryLimit): Promise<Instance> {
  const port = await freePort()
  const node = [process.execPath, ...BENCH_NODE_FLAGS, CLI, 'serve']
  // prlimit and the memory cgroup's shell run the command in their own process (exec): the pid is the instance's.
  const limited = raisedLimit ? ['prlimit', `--nofile=${INSTANCE_OPEN_FILES}:${INSTANCE_OPEN_FILES}`, '--', ...node] : node
  const [command, ...args] = memory ? memory.wrap(limited) : limited
  const child = spawn(command!, args, {
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...env, HOST: '127.0.0.1', PORT: String(port), INSTANCE_ID: id },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const tail: string[] = []
  for (const stream of [child.stdout!, child.stderr!]) {
    stream.on('data', (d: Buffer) => {
      tail.push(...d.toString('utf8').split('\n').filter(Boolean))
      tail.splice(0, tail.length - 20)
    })
  }
  const url = `http://127.0.0.1:${port}`
  const instance: Instance = { id, url, child, pid: child.pid!, exited: once(child, 'exit'), tail }
  started.push(instance)
  if (cleanup.begun) void stopInstance(instance)
  const deadline = Date.now() + 60_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`instance ${id} exited with ${child.exitCode}: ${tail.join('\n')}`)
    if (await fetch(`${url}/readyz`).then((r) => r.ok, () => false)) return instance
    if (Date.now() > deadline) throw new Error(`instance ${id} not ready within 60 s: ${tail.join('\n')}`)
    await sleep(200)
  }
}

async function stopInstance(instance: Instance): Promise<void> {
  if (instance.child.exitCode !== null || instance.child.signalCode !== null) return
  instance.child.kill('SIGTERM')
  const timer = setTimeout(() => instance.child.kill('SIGKILL'), 20_000)
  await instance.exited
  clearTimeout(timer)
}

/** CPU seconds of groups of processes, read together. */
function cpuOf(groups: Record<string, () => number>): Record<string, number> {
  return Object.fromEntries(Object.entries(groups).map(([name, read]) => [name, read()]))
}

interface Fleet {
  pgServer: PostgresServer
  stats: pg.Client
  database: string
  nats: NatsServer
  instances: Instance[]
  devices: DeviceProcess[]
  token: string
  total: number
}

export default async function fleet(args: string[]): Promise<void> {
  const total = option(args, 'links', 100_000, { integer: true })
  const instanceCount = option(args, 'instances', 6, { integer: true })
  const heartbeatS = option(args, 'heartbeat-s', 20)
  const memoryMaxMiB = args.includes('--memory-max') ? option(args, 'memory-max', 0, { integer: true }) : 0
  if (instanceCount < 2) throw new Error('--instances must be at least 2 (one is killed)')
  const cleanup = new Cleanup()
  let interrupted = false
  const onSignal = (signal: string) => {
    interrupted = true
    say(`${signal}: stopping everything`)
    void cleanup.run().finally(() => {
      say('stopped; temporary directories removed')
      process.exit(130)
    })
  }
  process.once('SIGINT', onSignal)
  process.once('SIGTERM', onSignal)
  try {
    const f = await setUp(total, instanceCount, heartbeatS, memoryMaxMiB, cleanup)
    await measure(f, heartbeatS)
  } catch (err) {
    // After Ctrl-C the set-up fails as its servers go away: that is no error to report.
    if (!interrupted) throw err
    await new Promise(() => undefined)
  } finally {
    say('stopping devices, instances, NATS and PostgreSQL')
    await cleanup.run()
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
    say('stopped; temporary directories removed')
  }
}

async function setUp(total: number, instanceCount: number, heartbeatS: number, memoryMaxMiB: number, cleanup: Cleanup): Promise<Fleet> {
  say(`fleet: ${total} links on ${instanceCount} instances${memoryMaxMiB > 0 ? `, each in a memory cgroup of ${memoryMaxMiB} MiB` : ''}; starting PostgreSQL and NATS of our own`)
  const pgServer = await startPostgresServer({
    settings: { max_connections: String(20 * instanceCount + 20), shared_preload_libraries: 'pg_stat_statements', 'pg_stat_statements.track': 'top' },
  })
  cleanup.add('PostgreSQL', () => pgServer.destroy())
  const database = 'fleetgate_fleet'
  const admin = new pg.Client({ connectionString: pgServer.url })
  await admin.connect()
  await admin.query(`create database ${database}`)
  await admin.end()
  const dbUrl = new URL(pgServer.url)
  dbUrl.pathname = `/${database}`
  const stats = new pg.Client({ connectionString: dbUrl.toString() })
  await stats.connect()
  cleanup.add('statistics connection', () => stats.end())
  await stats.query('create extension pg_stat_statements')

  const nats = await startNatsServer({ monitor: true })
  cleanup.add('NATS', () => nats.destroy())
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'fleetgate-fleet-'))
  cleanup.add('data directory', () => rm(dataDir, { recursive: true, force: true }))

  const env = {
    DATABASE_URL: dbUrl.toString(),
    NATS_URL: nats.url,
    DATA_DIR: dataDir,
    CLOUD_AUTH_USERS: JSON.stringify({ [ADMIN.username]: { password: ADMIN.password, role: 'admin' } }),
    CLOUD_JWT_SECRET: 'bench-jwt-secret-0123456789',
    PLATFORM_CONSOLE_TOKEN: 'bench-console-token',
    // Every simulated machine links from this host: one address.
    DEVICE_LINK_MAX_AWAITING_PER_ADDRESS: '100000',
  }
  const ids = Array.from({ length: instanceCount }, (_, i) => `fleet-${i + 1}`)
  const memory = new Map<string, MemoryLimit>()
  for (const id of memoryMaxMiB > 0 ? ids : []) {
    const limit = memoryLimit(`fleetgate-bench-${process.pid}-${id}`, memoryMaxMiB * 2 ** 20)
    cleanup.add(`memory cgroup of ${id}`, () => limit.remove())
    memory.set(id, limit)
  }
  const instances: Instance[] = []
  cleanup.add('instances', () => Promise.all(instances.map(stopInstance)))
  // The first one migrates the new database; the others then start together.
  await startInstance(ids[0]!, env, instances, cleanup, memory.get(ids[0]!))
  await Promise.all(ids.slice(1).map((id) => startInstance(id, env, instances, cleanup, memory.get(id))))
  say(`${instanceCount} instances ready: ${instances.map((i) => `${i.id} pid ${i.pid}`).join(', ')}; open-file limit of each ${openFileLimit(instances[0]!.pid)}`)

  const login = await fetch(`${instances[0]!.url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) })
  if (!login.ok) throw new Error(`login answered ${login.status}`)
  const token = ((await login.json()) as { token: string }).token

  const devices: DeviceProcess[] = []
  const linkUrls = instances.map((i) => `${i.url.replace('http', 'ws')}/api/v1/device-link`)
  for (let from = 0; from < total; from += LINKS_PER_DEVICE_PROCESS) {
    const device = await startDeviceProcess({ linkUrls, from, count: Math.min(LINKS_PER_DEVICE_PROCESS, total - from), heartbeatMs: heartbeatS * 1000 })
    cleanup.add(`device process ${device.pid}`, () => device.stop())
    devices.push(device)
  }
  return { pgServer, stats, database, nats, instances, devices, token, total }
}

const reports = async (f: Fleet): Promise<DeviceReport[]> => Promise.all(f.devices.map((d) => d.report()))

async function measure(f: Fleet, heartbeatS: number): Promise<void> {
  const { instances, devices, total } = f
  const pgPid = (await f.pgServer.pid())!
  const cpuOfAll = (pids: number[]) => () => sum(pids.map((pid) => cpuSeconds(pid)))
  const groups = () => ({
    instances: cpuOfAll(instances.map((i) => i.pid)),
    postgres: () => postgresCpuSeconds(pgPid),
    nats: cpuOfAll([f.nats.pid!]),
    devices: cpuOfAll(devices.map((d) => d.pid)),
  })
  const summary: string[] = []
  const line = (text: string) => {
    summary.push(text)
    say(text)
  }

  // Registration.
  await sleep(2000)
  const rssBefore = instances.map((i) => rssBytes(i.pid))
  const cpuBefore = cpuOf(groups())
  const sessionsBefore = (await postgresCounters(f.stats, f.database)).sessions
  say(`opening ${total} links from ${devices.length} device processes (round-robin over the instances)`)
  const t0 = performance.now()
  let opened: { seconds: number; failed: number }[] | undefined
  const opening = Promise.all(devices.map((d) => d.open())).then((o) => (opened = o))
  // Links up × seconds while registering (trapezoids between the 5 s readings): what the links
  // already up cost in heartbeats meanwhile is this times the idle window's CPU per link-second.
  let linkSeconds = 0
  let reading = { at: t0, linked: 0 }
  const readingAt = (at: number, linked: number) => {
    linkSeconds += ((at - reading.at) / 1000) * ((linked + reading.linked) / 2)
    reading = { at, linked }
  }
  // Bounded: 15 ms a link is 67 registrations/s, far below any rate worth measuring.
  const openDeadline = Date.now() + 120_000 + total * 15
  while (!opened && Date.now() < openDeadline) {
    await Promise.race([opening, sleep(5000)])
    if (opened) break
    const linked = (await reports(f)).reduce((acc, r) => acc.map((n, k) => n + r.linkedPerInstance[k]!), instances.map(() => 0))
    readingAt(performance.now(), sum(linked))
    say(`  linked so far: ${sum(linked)} (${linked.join(' / ')}), ${((sum(linked) * 1000) / (performance.now() - t0)).toFixed(0)}/s`)
  }
  if (!opened) throw new Error(`the links did not open within ${(120 + total * 0.015).toFixed(0)} s`)
  const seconds = (performance.now() - t0) / 1000
  const cpuOpen = cpuOf(groups())
  const failed = sum(opened.map((o) => o.failed))
  readingAt(t0 + seconds * 1000, total - failed)
  const retries = sum((await reports(f)).map((r) => r.openRetries))
  const sessionsOpened = (await postgresCounters(f.stats, f.database)).sessions - sessionsBefore
  const rate = (total - failed) / seconds
  line(
    `registration: ${total - failed} of ${total} in ${seconds.toFixed(1)} s = ${rate.toFixed(0)} registrations/s (target ≥ ${TARGETS.registrationsPerS}) ${verdict(rate >= TARGETS.registrationsPerS && failed === 0)}` +
      (failed > 0 ? `; ${failed} failed` : '') +
      (retries > 0 ? `; ${retries} refused first attempts tried again` : ''),
  )
  say(
    `  CPU while registering: instances ${(cpuOpen.instances! - cpuBefore.instances!).toFixed(1)} s (${(((cpuOpen.instances! - cpuBefore.instances!) * 1e6) / total).toFixed(0)} µs/registration), ` +
      `PostgreSQL ${(cpuOpen.postgres! - cpuBefore.postgres!).toFixed(1)} s, NATS ${(cpuOpen.nats! - cpuBefore.nats!).toFixed(1)} s, devices ${(cpuOpen.devices! - cpuBefore.devices!).toFixed(1)} s over ${seconds.toFixed(1)} s wall; ` +
      `PostgreSQL connections opened meanwhile ${sessionsOpened}`,
  )

  // A full heartbeat round, then memory.
  say(`waiting a full heartbeat round (${heartbeatS} s + 2 s)`)
  await sleep(heartbeatS * 1000 + 2000)
  const linksPer = await Promise.all(instances.map((i) => linksOf(i.url).catch(() => NaN)))
  const youngMiB = await Promise.all(instances.map((i) => youngGenerationBytes(i.url).then((b) => b / 2 ** 20, () => NaN)))
  const perLinkKb = instances.map((i, k) => (rssBytes(i.pid) - rssBefore[k]!) / Math.max(1, linksPer[k]!) / 1024)
  const worstKb = Math.max(...perLinkKb)
  line(
    `RSS per link after a heartbeat round (no forced GC): ${instances.map((i, k) => `${i.id} ${perLinkKb[k]!.toFixed(1)} KB (${linksPer[k]} links, ${(rssBefore[k]! / 2 ** 20).toFixed(0)} → ${(rssBytes(i.pid) / 2 ** 20).toFixed(0)} MiB)`).join(', ')}; ` +
      `worst ${worstKb.toFixed(1)} KB (target ≤ ${TARGETS.rssKbPerLink} KB on every instance) ${verdict(worstKb <= TARGETS.rssKbPerLink)}`,
  )
  // Not per link: V8 grows its young generation with the load, up to a size it takes from the memory the process may use.
  say(`  V8's young generation now: ${instances.map((i, k) => `${i.id} ${youngMiB[k]!.toFixed(0)} MiB`).join(', ')}`)

  const idle = await idleWindow(f, heartbeatS, groups, line)
  const upLinks = total - failed
  const perRegistrationMs = (name: string) => ((cpuOpen[name]! - cpuBefore[name]! - (idle[name]! / upLinks) * linkSeconds) * 1000) / upLinks
  const [instanceMs, postgresMs] = [perRegistrationMs('instances'), perRegistrationMs('postgres')]
  line(
    `CPU per registration, less the heartbeats of the links already up (${(linkSeconds / 1e6).toFixed(2)} M link-seconds at the idle window's CPU per link): ` +
      `instances ${instanceMs.toFixed(2)} ms (target ≤ ${TARGETS.instanceMsPerRegistration}) ${verdict(instanceMs <= TARGETS.instanceMsPerRegistration)}, ` +
      `PostgreSQL ${postgresMs.toFixed(2)} ms (target ≤ ${TARGETS.postgresMsPerRegistration}) ${verdict(postgresMs <= TARGETS.postgresMsPerRegistration)}, ` +
      `NATS ${perRegistrationMs('nats').toFixed(2)} ms, devices ${perRegistrationMs('devices').toFixed(2)} ms`,
  )
  await requests(f, line, { groups, idle })
  await killOne(f, line)

  console.log('\nsummary (figure beside target):')
  for (const text of summary) console.log(`  ${text}`)
}

/** Heartbeats only for one period; answers the CPU of each process group meanwhile, in cores. */
async function idleWindow(f: Fleet, seconds: number, groups: () => Record<string, () => number>, line: (text: string) => void): Promise<Record<string, number>> {
  say(`idle window: ${seconds} s of heartbeats only`)
  await f.stats.query('select pg_stat_statements_reset()')
  const pgBefore = await postgresCounters(f.stats, f.database)
  const natsBefore = await natsCounters(f.nats.monitorUrl!)
  const perInstanceBefore = f.instances.map((i) => cpuSeconds(i.pid))
  const cpuBefore = cpuOf(groups())
  const t0 = performance.now()
  await sleep(seconds * 1000)
  const elapsed = (performance.now() - t0) / 1000
  const cpuAfter = cpuOf(groups())
  const perInstance = f.instances.map((i, k) => (cpuSeconds(i.pid) - perInstanceBefore[k]!) / elapsed)
  const natsAfter = await natsCounters(f.nats.monitorUrl!)
  const pgAfter = await postgresCounters(f.stats, f.database)
  // The two statements of each reading are this bench's own, not the fleet's.
  const statementsPerS = (pgAfter.statements - pgBefore.statements - 2) / elapsed
  const xactsPerS = (pgAfter.transactions - pgBefore.transactions) / elapsed
  const sessionsPerS = (pgAfter.sessions - pgBefore.sessions) / elapsed
  const cores = (name: string) => (cpuAfter[name]! - cpuBefore[name]!) / elapsed
  line(`idle CPU of all instances: ${cores('instances').toFixed(2)} cores (target ≤ ${TARGETS.idleCores}) ${verdict(cores('instances') <= TARGETS.idleCores)}; per instance ${perInstance.map((c) => c.toFixed(2)).join(' / ')}`)
  line(`idle PostgreSQL: ${statementsPerS.toFixed(0)} statements/s from pg_stat_statements (target ≤ ${TARGETS.statementsPerS}) ${verdict(statementsPerS <= TARGETS.statementsPerS)}; ${xactsPerS.toFixed(0)} transactions/s and ${sessionsPerS.toFixed(2)} connections opened/s from pg_stat_database`)
  line(`idle NATS: ${((natsAfter.inMsgs - natsBefore.inMsgs) / elapsed).toFixed(0)} msgs/s in, ${((natsAfter.outMsgs - natsBefore.outMsgs) / elapsed).toFixed(0)} msgs/s out`)
  say(`  idle CPU elsewhere: PostgreSQL ${cores('postgres').toFixed(2)} cores, NATS ${cores('nats').toFixed(2)}, device processes ${cores('devices').toFixed(2)}`)
  const scrapes: number[] = []
  for (const instance of f.instances) scrapes.push(await scrapeMs(instance.url).catch(() => NaN))
  say(`  a /metrics scrape of each instance, one at a time: ${scrapes.map((ms) => `${ms.toFixed(1)} ms`).join(' / ')}`)
  say('  most frequent statements in the window:')
  for (const s of await topStatements(f.stats, 6)) say(`    ${String(s.calls).padStart(7)} × ${s.query}`)
  return Object.fromEntries(Object.keys(cpuAfter).map((name) => [name, cores(name)]))
}

interface RequestRound {
  /** Latency of each request, with when it started (ms since the round began). */
  timed: { startedMs: number; ms: number; route: 'direct' | 'hop' }[]
  failures: Map<string, number>
  sent: number
}

/**
 * A GET with the token on the pool's kept-alive connections: 'ok' for a 200 with its body read,
 * else what went wrong. node:http rather than fetch: at 20 in flight fetch took 0.45 of the 2
 * cores here (600 µs a request), node:http 0.26 (450 µs), CPU the instances measured did not get.
 */
function sendGet(f: Fleet, agent: http.Agent, url: string): Promise<string> {
  return new Promise((resolve) => {
    const request = http.get(url, { agent, headers: { authorization: `Bearer ${f.token}` }, timeout: REQUEST_TIMEOUT_MS }, (response) => {
      response.resume()
      response.on('end', () => resolve(response.statusCode === 200 ? 'ok' : `HTTP ${response.statusCode}`))
      response.on('error', (err) => resolve(err.name))
    })
    request.on('timeout', () => request.destroy(new Error('timed out')))
    request.on('error', (err) => resolve(err.message === 'timed out' ? 'TimeoutError' : err.name))
  })
}

/** `count` requests, `inFlight` at a time, each to a random machine through a random instance. */
async function requestRound(f: Fleet, agent: http.Agent, count: number, inFlight = REQUESTS_IN_FLIGHT): Promise<RequestRound> {
  const round: RequestRound = { timed: [], failures: new Map(), sent: 0 }
  const began = performance.now()
  const deadline = Date.now() + REQUESTS_WITHIN_MS
  const worker = async () => {
    while (round.sent < count && Date.now() < deadline) {
      round.sent++
      const index = Math.floor(Math.random() * f.total)
      const at = Math.floor(Math.random() * f.instances.length)
      const t0 = performance.now()
      const outcome = await sendGet(f, agent, `${f.instances[at]!.url}/api/v1/devices/${fleetDeviceId(index)}/hardware/position`)
      // Before the kill every machine is linked to instance (index mod N).
      round.timed.push({ startedMs: t0 - began, ms: performance.now() - t0, route: at === index % f.instances.length ? 'direct' : 'hop' })
      if (outcome !== 'ok') round.failures.set(outcome, (round.failures.get(outcome) ?? 0) + 1)
    }
  }
  await Promise.all(Array.from({ length: inFlight }, worker))
  if (round.sent < count) round.failures.set(`not sent within ${REQUESTS_WITHIN_MS / 1000} s`, count - round.sent)
  return round
}

const sortedMs = (timed: RequestRound['timed']) => timed.map((t) => t.ms).sort((a, b) => a - b)

/** The process groups' CPU readers, and what each spends per second on heartbeats alone (the idle window's, in cores). */
interface CpuBaseline {
  groups: () => Record<string, () => number>
  idle: Record<string, number>
}

async function requests(f: Fleet, line: (text: string) => void, cpu: CpuBaseline): Promise<void> {
  // One pool of connections for every round: a client that stays connected opens them once.
  const agent = new http.Agent({ keepAlive: true, maxSockets: REQUESTS_IN_FLIGHT })
  try {
    await requestRounds(f, agent, line, cpu)
  } finally {
    agent.destroy()
  }
}

async function requestRounds(f: Fleet, agent: http.Agent, line: (text: string) => void, cpu: CpuBaseline): Promise<void> {
  // The first requests open the bench's connections to each instance and run the forwarding
  // path for the first time in each (compiled then): a client that stays connected pays that once.
  const warm = await requestRound(f, agent, REQUESTS_WARM_UP)
  say(`warm-up, not counted: ${REQUESTS_WARM_UP} requests, p50 ${percentile(sortedMs(warm.timed), 50).toFixed(1)} ms, p99 ${percentile(sortedMs(warm.timed), 99).toFixed(1)} ms`)
  say(`${REQUESTS} requests (random machine, random instance, ${REQUESTS_IN_FLIGHT} in flight) while the fleet heartbeats`)
  await Promise.all(f.instances.map((i) => eventLoopMaxMs(i.url).catch(() => NaN)))
  const noGc = { minor: NaN, major: NaN, longMinor: NaN }
  const gcBefore = await Promise.all(f.instances.map((i) => gcTotals(i.url).catch(() => noGc)))
  const { round, wallS, machineBusy, cpuLine } = await measuredRound(f, agent, cpu, REQUESTS_IN_FLIGHT)
  const stalls = await Promise.all(f.instances.map((i) => eventLoopMaxMs(i.url).catch(() => NaN)))
  const gc = (await Promise.all(f.instances.map((i) => gcTotals(i.url).catch(() => noGc)))).map((after, k) => ({
    minorMs: (after.minor - gcBefore[k]!.minor) * 1000,
    majorMs: (after.major - gcBefore[k]!.major) * 1000,
    longMinor: after.longMinor - gcBefore[k]!.longMinor,
  }))
  say(
    `  longest event-loop delay of each instance during the round: ${stalls.map((ms) => `${ms.toFixed(0)} ms`).join(' / ')}; ` +
      `time in GC, minor + major (scavenges over 10 ms): ${gc.map((g) => `${g.minorMs.toFixed(0)} + ${g.majorMs.toFixed(0)} ms (${g.longMinor})`).join(' / ')}; ` +
      `machine ${machineBusy.toFixed(0)} % busy over ${wallS.toFixed(1)} s`,
  )
  say(`  ${cpuLine}`)
  for (const route of ['direct', 'hop'] as const) {
    const xs = sortedMs(round.timed.filter((t) => t.route === route))
    say(`  ${route === 'direct' ? 'to the instance holding the link' : 'to another instance (NATS hop)'}: ${xs.length} requests, p50 ${percentile(xs, 50).toFixed(1)} ms, p99 ${percentile(xs, 99).toFixed(1)} ms`)
  }
  const slowest = [...round.timed].sort((a, b) => b.ms - a.ms).slice(0, 5)
  say(`  slowest: ${slowest.map((t) => `${t.ms.toFixed(0)} ms (${t.route}, started at +${t.startedMs.toFixed(0)} ms)`).join(', ')}`)
  const latencies = sortedMs(round.timed)
  const succeeded = REQUESTS - sum([...round.failures.values()])
  const p99 = percentile(latencies, 99)
  line(
    `requests: ${succeeded} of ${REQUESTS} succeeded${round.failures.size > 0 ? ` (${[...round.failures].map(([k, v]) => `${v} × ${k}`).join(', ')})` : ''}, ` +
      `p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${p99.toFixed(1)} ms (target: all succeed, p99 ≤ ${TARGETS.requestP99Ms} ms) ${verdict(succeeded === REQUESTS && p99 <= TARGETS.requestP99Ms)}`,
  )
  // The same at a light load: what one operator waits when the 2 cores are not saturated by the requests themselves.
  const light = await measuredRound(f, agent, cpu, REQUESTS_IN_FLIGHT_LIGHT)
  const lightMs = sortedMs(light.round.timed)
  line(
    `requests at ${REQUESTS_IN_FLIGHT_LIGHT} in flight: ${REQUESTS - sum([...light.round.failures.values()])} of ${REQUESTS} succeeded, p50 ${percentile(lightMs, 50).toFixed(1)} ms, p99 ${percentile(lightMs, 99).toFixed(1)} ms (no target; the figure above is the one measured against it)`,
  )
  say(`  machine ${light.machineBusy.toFixed(0)} % busy over ${light.wallS.toFixed(1)} s; ${light.cpuLine}`)
}

/**
 * A round of `REQUESTS`, with the machine's share busy and what the requests themselves cost
 * each process group: its CPU over the round less its heartbeats (the idle window's rate).
 */
async function measuredRound(f: Fleet, agent: http.Agent, cpu: CpuBaseline, inFlight: number): Promise<{ round: RequestRound; wallS: number; machineBusy: number; cpuLine: string }> {
  const generatorBefore = cpuSeconds(process.pid)
  const groupsBefore = cpuOf(cpu.groups())
  const machineBefore = machineCpu()
  const began = performance.now()
  const round = await requestRound(f, agent, REQUESTS, inFlight)
  const wallS = (performance.now() - began) / 1000
  const machineAfter = machineCpu()
  const groupsAfter = cpuOf(cpu.groups())
  const generatorUs = ((cpuSeconds(process.pid) - generatorBefore) * 1e6) / round.sent
  const perRequestUs = (name: string) => ((groupsAfter[name]! - groupsBefore[name]! - cpu.idle[name]! * wallS) * 1e6) / round.sent
  return {
    round,
    wallS,
    machineBusy: (100 * (machineAfter.busy - machineBefore.busy)) / (machineAfter.total - machineBefore.total),
    cpuLine: `CPU per request, less the heartbeats meanwhile: ${Object.keys(groupsAfter).map((name) => `${name} ${perRequestUs(name).toFixed(0)} µs`).join(', ')}; this bench's own load generator ${generatorUs.toFixed(0)} µs`,
  }
}

/** Every surviving instance's count of machines alive (GET /devices?counts=true). */
async function onlineEverywhere(f: Fleet, survivors: Instance[]): Promise<number[]> {
  return Promise.all(
    survivors.map(async (i) => {
      const r = await fetch(`${i.url}/api/v1/devices?limit=1&counts=true`, { headers: { authorization: `Bearer ${f.token}` }, signal: AbortSignal.timeout(30_000) }).catch(() => undefined)
      return r?.ok ? ((await r.json()) as { counts: { online: number } }).counts.online : NaN
    }),
  )
}

async function killOne(f: Fleet, line: (text: string) => void): Promise<void> {
  const counts = await Promise.all(f.instances.map((i) => linksOf(i.url).catch(() => 0)))
  const victimIndex = counts.indexOf(Math.max(...counts))
  const victim = f.instances[victimIndex]!
  const survivors = f.instances.filter((i) => i !== victim)
  const needed = Math.ceil(f.total / survivors.length)
  const limit = openFileLimit(survivors[0]!.pid)
  // Each survivor takes links up to its open-file limit less the descriptors it keeps (1013 beyond).
  const victimLinks = counts[victimIndex]!
  const room = Math.min(victimLinks, survivors.length * (limit - RESERVED_DESCRIPTORS) - (f.total - victimLinks))
  if (room < victimLinks) {
    say(`  note: ${survivors.length} survivors need ~${needed} descriptors each for ${f.total} links, the open-file limit is ${limit}: room for ${room} of the ${victimLinks} machines to move`)
  }
  for (const d of f.devices) await d.mark()
  say(`SIGKILL ${victim.id} (pid ${victim.pid}, ${counts[victimIndex]} links)`)
  const killedAt = Date.now()
  victim.child.kill('SIGKILL')
  await victim.exited

  const deadline = killedAt + 90_000
  let relinkedAt: number | undefined
  let presenceAt: number | undefined
  let last: DeviceReport[] = []
  let lastOnline: number[] = []
  let lastSaid = 0
  while (Date.now() < deadline && presenceAt === undefined) {
    last = await reports(f)
    const dropped = sum(last.map((r) => r.droppedSinceMark))
    const relinked = sum(last.map((r) => r.relinkedSinceMark))
    if (relinkedAt === undefined && dropped >= victimLinks && relinked >= room) relinkedAt = Math.max(...last.map((r) => r.lastRelinkAt))
    if (relinkedAt !== undefined) {
      // Every survivor counts online exactly the machines linked now (those without room are offline).
      lastOnline = await onlineEverywhere(f, survivors)
      if (lastOnline.every((n) => n === f.total - victimLinks + relinked)) presenceAt = Date.now()
    }
    if (Date.now() - lastSaid >= 2000) {
      lastSaid = Date.now()
      say(
        `  +${((Date.now() - killedAt) / 1000).toFixed(1)} s: dropped ${dropped}, re-linked ${relinked}, refused attempts ${sum(last.map((r) => r.refusedSinceMark))}, gave up ${sum(last.map((r) => r.gaveUp))}` +
          (lastOnline.length > 0 ? `; online per survivor ${lastOnline.join(' / ')}` : ''),
      )
    }
    await sleep(500)
  }
  const relinkS = relinkedAt === undefined ? Infinity : (relinkedAt - killedAt) / 1000
  const presenceS = presenceAt === undefined ? Infinity : (presenceAt - killedAt) / 1000
  const relinkedCount = sum(last.map((r) => r.relinkedSinceMark))
  line(
    `after SIGKILL of ${victim.id}: ${relinkedCount} of ${victimLinks} machines re-linked ` +
      `${Number.isFinite(relinkS) ? `in ${relinkS.toFixed(1)} s` : 'not all within 90 s'}${room < victimLinks ? ` (all that had room: ${victimLinks - room} had none under the open-file limit)` : ''} ` +
      `(target: all within ${TARGETS.relinkS} s) ${verdict(relinkS <= TARGETS.relinkS && relinkedCount === victimLinks)}`,
  )
  line(
    `presence true on every survivor${room < victimLinks ? ' (for the machines linked)' : ''} ${Number.isFinite(presenceS) ? `${presenceS.toFixed(1)} s after the kill` : lastOnline.length > 0 ? `not within 90 s (online: ${lastOnline.join(' / ')})` : 'not polled: the re-link never completed'} ` +
      `(target ≤ ${TARGETS.presenceS} s) ${verdict(presenceS <= TARGETS.presenceS)}`,
  )
  await splitBrain(f, survivors, killedAt, line)
  say(`  PostgreSQL deadlocks over the whole run: ${(await postgresCounters(f.stats, f.database)).deadlocks}`)
}

/**
 * The rows still naming the killed instance as holder (machines with no room to re-link) are
 * cleared by the survivors' presence sweep once it has been silent for `lostAfterMs`: wait for
 * that, with a margin, before reading the holders (the machines with room may re-link sooner).
 */
async function deadHolderCleared(f: Fleet, survivors: Instance[], killedAt: number): Promise<number> {
  const deadline = killedAt + PRESENCE_DEFAULTS.lostAfterMs + 3 * PRESENCE_DEFAULTS.beatMs + 10_000
  const alive = survivors.map((i) => i.id)
  for (;;) {
    const { rows } = await f.stats.query<{ n: string }>('select count(*)::text as n from devices where link_instance is not null and not (link_instance = any($1))', [alive])
    if (Number(rows[0]!.n) === 0 || Date.now() >= deadline) return (Date.now() - killedAt) / 1000
    await sleep(250)
  }
}

/** One link per machine: the devices, each instance's /metrics and the database's holder column agree. */
async function splitBrain(f: Fleet, survivors: Instance[], killedAt: number, line: (text: string) => void): Promise<void> {
  const clearedS = await deadHolderCleared(f, survivors, killedAt)
  const deviceSide = f.instances.map(() => 0)
  for (const r of await reports(f)) r.linkedPerInstance.forEach((n, k) => (deviceSide[k]! += n))
  // An instance out of descriptors accepts no connection: NaN then.
  const metrics = await Promise.all(survivors.map((i) => linksOf(i.url).catch(() => NaN)))
  const held = await f.stats.query<{ link_instance: string | null; n: string }>('select link_instance, count(*)::text as n from devices group by link_instance')
  const byHolder = new Map(held.rows.map((r) => [r.link_instance, Number(r.n)]))
  const rows = survivors.map((i, k) => ({ id: i.id, devices: deviceSide[f.instances.indexOf(i)]!, metrics: metrics[k]!, database: byHolder.get(i.id) ?? 0 }))
  const elsewhere = sum(held.rows.filter((r) => r.link_instance !== null && !survivors.some((i) => i.id === r.link_instance)).map((r) => Number(r.n)))
  const unlinked = byHolder.get(null) ?? 0
  for (const r of rows) say(`  ${r.id}: devices say ${r.devices}, /metrics ${r.metrics}, database holder ${r.database}; descriptors open ${openDescriptors(survivors.find((i) => i.id === r.id)!.pid)}`)
  const agree = rows.every((r) => r.devices === r.metrics)
  const linked = sum(metrics)
  line(
    `one link per machine: the survivors hold ${linked} links by /metrics, the devices ${sum(deviceSide)} of ${f.total}; per instance they ${agree ? 'agree' : 'DISAGREE'} ` +
      `(target: every machine linked once) ${verdict(agree && linked === f.total && sum(deviceSide) === f.total)}`,
  )
  const dbAgree = rows.every((r) => r.database === r.devices)
  const notLinked = f.total - sum(deviceSide)
  line(
    `database link holder ${clearedS.toFixed(1)} s after the kill (the presence sweep clears a dead holder ${PRESENCE_DEFAULTS.lostAfterMs / 1000}–${(PRESENCE_DEFAULTS.lostAfterMs + PRESENCE_DEFAULTS.beatMs) / 1000} s after its last sign of life): ` +
      `${elsewhere} rows name a dead instance, ${unlinked} name none (machines not linked: ${notLinked}), per instance ${dbAgree ? 'as the devices say' : 'NOT as the devices say'} ` +
      `${verdict(elsewhere === 0 && unlinked === notLinked && dbAgree)}`,
  )
}
