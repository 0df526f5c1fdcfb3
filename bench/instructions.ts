/**
 * `npm run bench -- instructions [--warmup 20000] [--requests 10000] [--connections 50]`: instructions
 * per request, counted by valgrind (callgrind), so that the machine's load, which moves req/s by
 * ±50 % from one round to the next, does not move them.
 *  - server: the bare Fastify route, the forwarding floor and fleetgate forwarding
 *    `GET …/hardware/position`, each under valgrind in turn with its device (native);
 *  - device: the SDK's DeviceAgent behind fleetgate, and the MQTT baseline's device behind
 *    Mosquitto, each under valgrind in turn with its server or broker native.
 * Counting starts after the warm-up and stops with the load; the main thread's count is the one
 * compared (all threads add V8's compilation, which moves from run to run).
 * Under valgrind a process runs ~50× slower, so the batching of link frames (frames sent in one
 * turn of the event loop leave in one write) depends on the relative speed of the processes: the
 * bare route's count repeats within 0.2 %, the link paths' (floor, forwarded, agent) move by up
 * to ±15 % from run to run. Compare the contenders of one run, or versions over several runs.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { startDevice, type DeviceProcess } from './bench-devices.js'
import { BENCH_DEVICE } from './bench-gateway.js'
import { runLoad, type LoadJob } from './bench-load.js'
import { startTarget, type Target, type TargetName } from './bench-targets.js'
import { option } from './bench-options.js'

const MQTT_URL = process.env.BENCH_MQTT_URL ?? 'mqtt://127.0.0.1:1883'

/** valgrind's callgrind with counting off until `callgrind_control -i on`; the totals go to stderr. */
const CALLGRIND = ['valgrind', '--tool=callgrind', '--instr-atstart=no', '--callgrind-out-file=/dev/null', '--log-file=/dev/null']
const counting = (pid: number, on: boolean) => execFileSync('callgrind_control', ['-i', on ? 'on' : 'off', String(pid)], { stdio: 'ignore' })
const QUIET: { encoding: 'utf8'; stdio: ('ignore' | 'pipe')[] } = { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }
/**
 * Instructions counted so far in a process under callgrind: its main thread (the event loop,
 * where requests are served) and all its threads (adding V8's helpers: parallel garbage
 * collection, and compilation, which still runs after a warm-up and moves from run to run).
 */
function counted(pid: number): { main: number; all: number } {
  const out = execFileSync('callgrind_control', ['-e', String(pid)], QUIET)
  const threads = [...out.matchAll(/^\s*Th\s*(\d+)\s+([\d,]+)\s*$/gm)].map((m) => ({ id: Number(m[1]), count: Number(m[2]!.replaceAll(',', '')) }))
  if (threads.length === 0) throw new Error(`callgrind_control -e gave no totals: ${out}`)
  return { main: threads.find((t) => t.id === 1)?.count ?? 0, all: threads.reduce((sum, t) => sum + t.count, 0) }
}

/**
 * Warm-up, then one request at a time for a while (requests the warm-up left in flight are
 * answered meanwhile: they must not overlap the count, nor push the measured load over the 64
 * a link lets wait), then the measured load with counting on in `pid`; instructions per answer.
 * Nothing else (no /metrics scrape) reaches the server in between: a request of another route
 * deoptimises the hot code, and its recompilation would be counted.
 */
interface Counted {
  /** Main thread, per answered request. */
  perRequest: number
  /** All threads, per answered request. */
  allThreads: number
  requests: number
}

async function measure(pid: number, job: LoadFor, warmup: number, requests: number): Promise<Counted> {
  await runLoad(job(warmup))
  await runLoad(job(200, 1))
  counting(pid, true)
  const before = counted(pid)
  const result = await runLoad(job(requests))
  const after = counted(pid)
  counting(pid, false)
  if (result.bad > 0 || result.errors > 0) throw new Error(`${result.bad} bad answers, ${result.errors} errors during the measured load`)
  return { perRequest: (after.main - before.main) / result.total, allThreads: (after.all - before.all) / result.total, requests: result.total }
}

const thousands = (n: number) => Math.round(n).toLocaleString('en')
const report = (side: string, name: string, { perRequest, allThreads, requests }: Counted, where = '') =>
  console.log(`  ${side.padEnd(7)} ${name.padEnd(10)} ${thousands(perRequest).padStart(9)} instructions/request   (all threads ${thousands(allThreads)}; ${requests} requests${where})`)

/** A load of `requests` requests at `concurrency`; `seconds` only bounds it (valgrind makes a process ~50× slower). */
type LoadFor = (requests: number, concurrency?: number) => LoadJob
const BOUND_S = 600

export default async function instructions(args: string[]): Promise<void> {
  if (spawnSync('valgrind', ['--version']).status !== 0) {
    console.log('instructions: valgrind is not installed (Debian package valgrind); nothing measured')
    return
  }
  const warmup = option(args, 'warmup', 20_000)
  const requests = option(args, 'requests', 10_000)
  const connections = option(args, 'connections', 50)
  const httpJob =
    (target: Target): LoadFor =>
    (requests, concurrency = connections) => ({
      kind: 'http',
      url: `${target.url}${target.path}`,
      connections: concurrency,
      seconds: BOUND_S,
      requests,
      noWarmup: true,
      headers: target.headers,
    })
  console.log(`instructions per request (valgrind callgrind), ${warmup} requests to warm up, then ${requests} counted, at ${connections} concurrent`)

  const server: Partial<Record<TargetName, number>> = {}
  for (const name of ['bare', 'floor', 'forwarded'] as const) {
    const target = await startTarget(name, CALLGRIND)
    let device: DeviceProcess | undefined
    try {
      if (name !== 'bare') {
        device = await startDevice({ kind: 'link', url: target.url, ...BENCH_DEVICE })
        await target.bindDevice()
      }
      const counted = await measure(target.pid, httpJob(target), warmup, requests)
      server[name] = counted.perRequest
      report('server', name, counted)
    } finally {
      await device?.stop()
      await target.stop()
    }
  }

  const device: Record<string, number> = {}
  {
    const target = await startTarget('forwarded', [], true)
    const agent = await startDevice({ kind: 'link', url: target.url, ...BENCH_DEVICE }, CALLGRIND)
    try {
      await target.bindDevice()
      const counted = await measure(agent.pid, httpJob(target), warmup, requests)
      device.agent = counted.perRequest
      report('device', 'SDK agent', counted, ', behind fleetgate')
    } finally {
      await agent.stop()
      await target.stop()
    }
  }
  {
    const topic = `fleetgate-bench/${process.pid}/instructions`
    const mqtt = await startDevice({ kind: 'mqtt', url: MQTT_URL, topic }, CALLGRIND)
    try {
      const job: LoadFor = (requests, concurrency = connections) => ({ kind: 'mqtt', url: MQTT_URL, topic, concurrency, seconds: BOUND_S, shared: false, requests, noWarmup: true })
      const counted = await measure(mqtt.pid, job, warmup, requests)
      device.mqtt = counted.perRequest
      report('device', 'MQTT', counted, ', behind Mosquitto')
    } finally {
      await mqtt.stop()
    }
  }

  const ratio = (a: number | undefined, b: number | undefined) => (a! / b!).toFixed(2)
  console.log(
    `ratios (main threads): server forwarded/bare ${ratio(server.forwarded, server.bare)}, floor/bare ${ratio(server.floor, server.bare)}, ` +
      `forwarded/floor ${ratio(server.forwarded, server.floor)}; device SDK agent/MQTT device ${ratio(device.agent, device.mqtt)}`,
  )
}
