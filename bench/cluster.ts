/**
 * `npm run bench -- cluster [--duration 10] [--connections 50]`: the cost of the cross-instance
 * hop. Two `fleetgate serve` processes (A, B) on one PostgreSQL schema and NATS; a device (the
 * SDK's DeviceAgent, in this process) links to A; autocannon (a child process) sends
 * GET /api/v1/devices/{id}/hardware/position to A, then to B (one NATS hop), in the same run.
 * Target: B/A ≥ 0.5. Needs PostgreSQL (TEST_DATABASE_URL or 127.0.0.1:5432) and NATS
 * (TEST_NATS_URL or 127.0.0.1:4222).
 * Each row splits the CPU per request by process (user+system µs): A, B, the device, and the NATS
 * server when it runs on this machine (not counted in the row's total, which the hop figure uses).
 */
import { execFile } from 'node:child_process'
import { once } from 'node:events'
import { createRequire } from 'node:module'
import { readdirSync, readFileSync } from 'node:fs'
import { DeviceAgent, ok, RouteTable } from '@fleetgate/device-agent'
import { createScratchDatabase } from '../src/cluster/scratch-database.js'
import { median } from './bench-latency.js'
import { option } from './bench-options.js'
import { startServe, type ServedServer } from './bench-serve.js'

const POSITION = { x: 120.5, y: 80.25, z: 10, r: 90 }
const PG_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const NATS_URL = process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222'

interface Run {
  rps: number
  seconds: number
  /** CPU time of both instances and the device (this process) per request, in µs. */
  cpuUs?: number
  /** Per process (A, B, the device, and the NATS server when it runs here): user and system time per request, in µs. */
  split?: CpuSplit[]
  p50: number
  p99: number
  non2xx: number
  errors: number
}

function autocannon(url: string, seconds: number, connections: number, headers: Record<string, string>): Promise<Run> {
  const cli = createRequire(import.meta.url).resolve('autocannon')
  const args = [cli, '-j', '-c', String(connections), '-d', String(seconds), ...Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}=${v}`]), url]
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { maxBuffer: 64 * 1024 * 1024 }, (err, stdout) => {
      if (err) return reject(err)
      const r = JSON.parse(stdout)
      resolve({ rps: r.requests.average, seconds, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors + r.timeouts })
    })
  })
}

interface CpuSplit {
  name?: string
  user: number
  system: number
}

/** utime and stime of a process in µs (Linux /proc; 0 elsewhere). */
function processCpu(pid: number): CpuSplit {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
    return { user: Number(fields[11]) * 10_000, system: Number(fields[12]) * 10_000 }
  } catch {
    return { user: 0, system: 0 }
  }
}

/** The local NATS server's process, found by its command line naming `url`'s port (Linux /proc; undefined elsewhere). */
function natsServerPid(url: string): number | undefined {
  const port = new URL(url).port || '4222'
  try {
    const pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name))
    const found = pids.filter((pid) => {
      try {
        const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')
        return args[0]?.endsWith('nats-server') && (args.includes(port) || (port === '4222' && !args.some((a) => a === '-p' || a === '--port')))
      } catch {
        return false
      }
    })
    return found.length === 1 ? Number(found[0]) : undefined
  } catch {
    return undefined
  }
}

interface Measured {
  name: string
  /** Undefined: this process (the device). */
  pid?: number
}

/** `run`, and the CPU time per request of each process; `cpuUs` counts the instances and the device, not the NATS server. */
async function measured(processes: Measured[], run: () => Promise<Run>): Promise<Run> {
  const cpu = (pid?: number): CpuSplit => {
    if (pid !== undefined) return processCpu(pid)
    const { user, system } = process.cpuUsage()
    return { user, system }
  }
  const before = processes.map((p) => cpu(p.pid))
  const r = await run()
  const requests = Math.max(1, r.rps * r.seconds)
  const split = processes.map((p, i) => {
    const after = cpu(p.pid)
    return { name: p.name, user: (after.user - before[i]!.user) / requests, system: (after.system - before[i]!.system) / requests }
  })
  const counted = split.filter((p) => p.name !== 'NATS')
  return { ...r, cpuUs: counted.reduce((sum, p) => sum + p.user + p.system, 0), split }
}

const splitText = (split: CpuSplit[] = []) => split.map((p) => `${p.name} ${p.user.toFixed(0)}+${p.system.toFixed(0)}`).join('  ')



function startInstance(name: string, env: Record<string, string>): Promise<ServedServer> {
  // BENCH_CPU_PROF=<dir>: each instance writes a V8 CPU profile there when it stops.
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_CPU_PROF, '--cpu-prof-name', `${name}.cpuprofile`] : []
  return startServe({
    env: { INSTANCE_ID: name, DEVICE_LINK_MAX_AWAITING_PER_ADDRESS: '100000', ...env },
    nodeArgs: profile,
    name: `instance ${name}`,
    captureStderr: true,
    readyWithinMs: Infinity,
  })
}

export default async function cluster(args: string[]): Promise<void> {
  const seconds = option(args, 'duration', 10)
  const connections = option(args, 'connections', 50)
  const database = await createScratchDatabase(PG_URL, 'bench_cluster')
  const env = {
    DATABASE_URL: database.url,
    NATS_URL,
    CLOUD_AUTH_USERS: JSON.stringify({ bench: { password: 'bench-password', role: 'admin' } }),
    PLATFORM_CONSOLE_TOKEN: 'bench-console-token',
    CLOUD_JWT_SECRET: 'bench-jwt-secret-0123456789',
    // BENCH_CLUSTER_KEY=<32+ bytes>: the instances sign every NATS message (the cost of §17's signatures).
    ...(process.env.BENCH_CLUSTER_KEY ? { CLUSTER_KEY: process.env.BENCH_CLUSTER_KEY } : {}),
  }
  const instances: ServedServer[] = []
  let agent: DeviceAgent | undefined
  try {
    const a = await startInstance('bench-a', env)
    instances.push(a)
    const b = await startInstance('bench-b', env)
    instances.push(b)
    const login = await fetch(`${a.base}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'bench', password: 'bench-password' }),
    })
    const token = ((await login.json()) as { token: string }).token
    const routes = new RouteTable().get('/hardware/position', () => ok(POSITION))
    agent = new DeviceAgent({ url: a.base, deviceId: 'bench-cluster-01', key: 'bench-device-key-0001', version: 'bench', routes, maxConcurrentRequests: 64 })
    const registered = once(agent, 'registered')
    agent.start()
    await registered

    const auth = { authorization: `Bearer ${token}` }
    const target = (base: string) => `${base}/api/v1/devices/bench-cluster-01/hardware/position`
    console.log(`device linked to A; warming up, then A, B, A, B, A, B for ${seconds} s × ${connections} connections each…`)
    await autocannon(target(a.base), 2, connections, auth)
    await autocannon(target(b.base), 2, connections, auth)
    // A and B alternate, three pairs: the machine's load drifts, a pair sees the same load.
    const nats = natsServerPid(NATS_URL)
    const processes: Measured[] = [{ name: 'A', pid: a.child.pid! }, { name: 'B', pid: b.child.pid! }, { name: 'device' }, ...(nats ? [{ name: 'NATS', pid: nats }] : [])]
    const pairs: { viaA: Run; viaB: Run }[] = []
    for (let i = 0; i < 3; i++) {
      const viaA = await measured(processes, () => autocannon(target(a.base), process.env.BENCH_CPU_PROF ? 1 : seconds, connections, auth))
      const viaB = await measured(processes, () => autocannon(target(b.base), seconds, connections, auth))
      pairs.push({ viaA, viaB })
    }
    const row = (name: string, r: Run) =>
      `${name.padEnd(40)} ${r.rps.toFixed(0).padStart(7)} req/s   p50 ${String(r.p50).padStart(3)} ms   p99 ${String(r.p99).padStart(3)} ms   ` +
      `${(r.cpuUs ?? 0).toFixed(0).padStart(4)} µs CPU/req (user+system: ${splitText(r.split)})   non-2xx ${r.non2xx}   errors ${r.errors}`
    pairs.forEach(({ viaA, viaB }, i) => {
      console.log(row(`(A${i + 1}) to the instance holding the link`, viaA))
      console.log(row(`(B${i + 1}) to the other instance (NATS hop)`, viaB))
    })
    const ratio = median(pairs.map((p) => p.viaB.rps / p.viaA.rps))
    const hopUs = median(pairs.map((p) => (p.viaB.cpuUs ?? 0) - (p.viaA.cpuUs ?? 0)))
    console.log(`ratio B/A (median of ${pairs.length} pairs): ${ratio.toFixed(3)} req/s (target ≥ 0.50) ${ratio >= 0.5 ? 'OK' : 'BELOW TARGET'}; the hop costs ${hopUs.toFixed(0)} µs CPU per request`)
  } finally {
    await agent?.close()
    for (const instance of instances) await instance.stop()
    await database.drop().catch(() => undefined)
  }
}
