/**
 * `npm run bench -- proxy [--duration 10] [--connections 50] [--rounds 1] [--rate 5000] [--open-duration 10] [--only bare,forwarded,floor,mqtt,nats,mqtt-shared,nats-shared]`
 *
 * The cost of forwarding, against baselines with the same concurrency and process layout
 * (load generator process → server or broker, each in its own process → device process):
 *  (a) a bare Fastify JSON route (no device);
 *  (b) fleetgate `GET /api/v1/devices/{id}/hardware/position`, a bound non-admin user's token,
 *      forwarded over the device link to the SDK's DeviceAgent (auth, access check, metrics,
 *      logging at info as `fleetgate serve` logs, SQLite file database: all on);
 *  (b') the forwarding floor: the same parts with none of the product's own work (bench-floor.ts);
 *  (c) MQTT request/response through the local Mosquitto (127.0.0.1:1883) to an `mqtt` device,
 *      one connection per requester as each HTTP requester has its own; (c') all requesters
 *      sharing one connection;
 *  (d) NATS request-reply (127.0.0.1:4222) to a `nats` device; (d') one shared connection.
 * Contenders alternate (the order rotates each round). Then an open loop at `--rate` req/s
 * against (a) and (b): latency counted from each request's scheduled send time.
 * CPU/req: µs of CPU per request of the server (bare Fastify, fleetgate) or broker (mosquitto,
 * nats-server), plus the device process: steadier than req/s on a shared machine.
 * Targets: b/a ≥ 0.6, b/c ≥ 1.0, p99(b) ≤ 2 × p99(a), open-loop p99(b) ≤ 20 ms.
 */
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { startDevice, type DeviceProcess } from './bench-devices.js'
import { BENCH_DEVICE } from './bench-gateway.js'
import { runLoad, type LoadResult } from './bench-load.js'
import { startTarget } from './bench-targets.js'
import { MAX_IN_FLIGHT } from '@fleetgate/device-agent/protocol'
import { median } from './bench-latency.js'
import { option } from './bench-options.js'

const MQTT_URL = process.env.BENCH_MQTT_URL ?? 'mqtt://127.0.0.1:1883'
const NATS_URL = process.env.BENCH_NATS_URL ?? 'nats://127.0.0.1:4222'

/** CPU time of a local process, in µs; NaN when it cannot be read. */
function cpuOfPid(pid: number | string | undefined): () => number {
  return () => {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
      return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100
    } catch {
      return NaN
    }
  }
}

/** CPU time of a local process found by name (the brokers). */
function processCpu(name: string): () => number {
  try {
    return cpuOfPid(execFileSync('pgrep', ['-o', '-x', name], { encoding: 'utf8' }).trim())
  } catch {
    return () => NaN
  }
}


const CONTENDERS = ['bare', 'forwarded', 'mqtt', 'nats', 'mqtt-shared', 'nats-shared', 'floor'] as const
type Contender = (typeof CONTENDERS)[number]
const LABELS: Record<Contender, string> = {
  bare: '(a) bare Fastify route',
  forwarded: '(b) fleetgate forwarded',
  mqtt: '(c) MQTT via Mosquitto',
  nats: '(d) NATS request-reply',
  'mqtt-shared': "(c') MQTT, 1 shared conn.",
  'nats-shared': "(d') NATS, 1 shared conn.",
  floor: "(b') forwarding floor",
}

interface Measured extends LoadResult {
  /** µs of CPU per request: the server (fleetgate or bare Fastify) or broker, and the device process. */
  serverCpu: number
  deviceCpu: number
}

const row = (name: string, r: Measured) =>
  `${name.padEnd(28)} ${String(r.rps).padStart(7)} req/s   p50 ${r.p50.toFixed(2).padStart(6)} ms   p99 ${r.p99.toFixed(2).padStart(6)} ms   max ${r.max
    .toFixed(1)
    .padStart(6)} ms   CPU/req ${r.serverCpu.toFixed(0).padStart(3)} + ${r.deviceCpu.toFixed(0).padStart(3)} µs   bad ${r.bad}${statusCounts(r)}   errors ${r.errors}`

/** `(503×102)`: the open loop's non-2xx answers by status. A 503 is the contract's limit of requests in flight per device. */
const statusCounts = (r: Measured) =>
  r.badStatuses && r.bad > 0 ? ` (${Object.entries(r.badStatuses).map(([status, n]) => `${status}×${n}`).join(', ')})` : ''

export default async function proxy(args: string[]): Promise<void> {
  const seconds = option(args, 'duration', 10)
  const connections = option(args, 'connections', 50)
  const rounds = option(args, 'rounds', 1)
  const rate = option(args, 'rate', 5000)
  const openSeconds = option(args, 'open-duration', 10)
  const onlyAt = args.indexOf('--only')
  const chosen = onlyAt >= 0 ? (args[onlyAt + 1] ?? '').split(',') : [...CONTENDERS]
  const contenders = CONTENDERS.filter((c) => chosen.includes(c))

  // Each server alone in its process, as each broker is: servers sharing a process would share
  // V8's type feedback, and each would slow the others' code down.
  const [bare, gateway, floor] = await Promise.all([startTarget('bare'), startTarget('forwarded'), startTarget('floor')])

  const topic = `fleetgate-bench/${process.pid}/position`
  const subject = `fleetgate-bench.${process.pid}.position`
  const devices = await Promise.all([
    startDevice({ kind: 'link', url: gateway.url, ...BENCH_DEVICE }),
    startDevice({ kind: 'mqtt', url: MQTT_URL, topic }),
    startDevice({ kind: 'nats', url: NATS_URL, subject }),
    startDevice({ kind: 'link', url: floor.url, ...BENCH_DEVICE }),
  ])
  await gateway.bindDevice()

  const direct = `${bare.url}${bare.path}`
  const forwarded = `${gateway.url}${gateway.path}`
  const auth = gateway.headers
  const [linkDevice, mqttDevice, natsDevice, floorDevice] = devices as [DeviceProcess, DeviceProcess, DeviceProcess, DeviceProcess]
  const cpuOf: Record<Contender, { server: () => number; device: () => Promise<number> }> = {
    bare: { server: cpuOfPid(bare.pid), device: async () => 0 },
    forwarded: { server: cpuOfPid(gateway.pid), device: () => linkDevice.cpu() },
    mqtt: { server: processCpu('mosquitto'), device: () => mqttDevice.cpu() },
    nats: { server: processCpu('nats-server'), device: () => natsDevice.cpu() },
    'mqtt-shared': { server: processCpu('mosquitto'), device: () => mqttDevice.cpu() },
    'nats-shared': { server: processCpu('nats-server'), device: () => natsDevice.cpu() },
    floor: { server: cpuOfPid(floor.pid), device: () => floorDevice.cpu() },
  }
  const run = async (c: Contender): Promise<Measured> => {
    const [server, device] = [cpuOf[c].server(), await cpuOf[c].device()]
    const result = await load(c)
    const requests = Math.max(1, result.total)
    return { ...result, serverCpu: (cpuOf[c].server() - server) / requests, deviceCpu: ((await cpuOf[c].device()) - device) / requests }
  }
  const load = (c: Contender): Promise<LoadResult> => {
    switch (c) {
      case 'bare':
        return runLoad({ kind: 'http', url: direct, connections, seconds, headers: {} })
      case 'forwarded':
        return runLoad({ kind: 'http', url: forwarded, connections, seconds, headers: auth })
      case 'floor':
        return runLoad({ kind: 'http', url: `${floor.url}${floor.path}`, connections, seconds, headers: auth })
      case 'mqtt':
      case 'mqtt-shared':
        return runLoad({ kind: 'mqtt', url: MQTT_URL, topic, concurrency: connections, seconds, shared: c === 'mqtt-shared' })
      case 'nats':
      case 'nats-shared':
        return runLoad({ kind: 'nats', url: NATS_URL, subject, concurrency: connections, seconds, shared: c === 'nats-shared' })
    }
  }

  /** Open loop; also the server's own event-loop delay, to tell its stalls from the machine's. */
  const openLoop = async (c: 'bare' | 'forwarded'): Promise<Measured> => {
    const target = c === 'bare' ? bare : gateway
    const [server, device] = [cpuOf[c].server(), await cpuOf[c].device()]
    await target.watchDelay(true)
    const result = await runLoad({ kind: 'http-open', url: c === 'bare' ? direct : forwarded, rate, seconds: openSeconds, headers: c === 'bare' ? {} : auth })
    const delay = await target.watchDelay(false)
    console.log(`    server event-loop delay during the ${c} open loop: p99 ${delay.p99.toFixed(1)} ms, max ${delay.max.toFixed(1)} ms`)
    const requests = Math.max(1, result.total)
    return { ...result, serverCpu: (cpuOf[c].server() - server) / requests, deviceCpu: ((await cpuOf[c].device()) - device) / requests }
  }

  try {
    console.log(`proxy: ${rounds} round(s) × ${contenders.length} contenders × ${seconds} s at ${connections} concurrent (1 s warm-up each), then open loop ${rate} req/s × ${openSeconds} s`)
    const results = Object.fromEntries(CONTENDERS.map((c) => [c, [] as Measured[]])) as Record<Contender, Measured[]>
    for (let round = 0; round < rounds; round++) {
      const order = contenders.map((_, i) => contenders[(i + round) % contenders.length]!)
      for (const c of order) results[c].push(await run(c))
      console.log(`round ${round + 1}`)
      for (const c of contenders) console.log(`  ${row(LABELS[c], results[c][round]!)}`)
      if (contenders.length < CONTENDERS.length) continue
      const [a, b, m] = [results.bare[round]!, results.forwarded[round]!, results.mqtt[round]!]
      const [f, ms] = [results.floor[round]!, results['mqtt-shared'][round]!]
      console.log(
        `  ratios: forwarded/bare ${(b.rps / a.rps).toFixed(2)}   forwarded/MQTT ${(b.rps / m.rps).toFixed(2)}   p99 forwarded/bare ${(b.p99 / a.p99).toFixed(2)}` +
          `   (forwarded/floor ${(b.rps / f.rps).toFixed(2)}, floor/bare ${(f.rps / a.rps).toFixed(2)}, forwarded/MQTT-shared ${(b.rps / ms.rps).toFixed(2)})`,
      )
    }
    if (contenders.length < CONTENDERS.length) {
      if (contenders.includes('forwarded')) console.log(`open loop ${row(LABELS.forwarded, await openLoop('forwarded'))}`)
      return
    }
    if (rounds > 1) {
      const med = (c: Contender, k: 'rps' | 'p99') => median(results[c].map((r) => r[k]))
      console.log(
        `ratio of the medians of ${rounds} rounds: forwarded/bare ${(med('forwarded', 'rps') / med('bare', 'rps')).toFixed(2)}   forwarded/MQTT ${(med('forwarded', 'rps') / med('mqtt', 'rps')).toFixed(2)}   ` +
          `p99 bare ${med('bare', 'p99')} forwarded ${med('forwarded', 'p99')} MQTT ${med('mqtt', 'p99')} NATS ${med('nats', 'p99')} ms`,
      )
    }
    const cpu = (c: Contender) => median(results[c].map((r) => r.serverCpu))
    console.log(
      `server CPU per request (medians): bare ${cpu('bare').toFixed(1)}, floor ${cpu('floor').toFixed(1)}, forwarded ${cpu('forwarded').toFixed(1)} µs: ` +
        `the link's parts (floor − bare) ${(cpu('floor') - cpu('bare')).toFixed(1)} µs, fleetgate's own work (forwarded − floor) ${(cpu('forwarded') - cpu('floor')).toFixed(1)} µs`,
    )
    const ratio = median(results.forwarded.map((r, i) => r.rps / results.bare[i]!.rps))
    const vsMqtt = median(results.forwarded.map((r, i) => r.rps / results.mqtt[i]!.rps))
    const p99 = median(results.forwarded.map((r, i) => r.p99 / results.bare[i]!.p99))
    const vsFloor = median(results.forwarded.map((r, i) => r.rps / results.floor[i]!.rps))
    const floorVsBare = median(results.floor.map((r, i) => r.rps / results.bare[i]!.rps))
    console.log(`forwarding floor (median of the per-round ratios): floor/bare ${floorVsBare.toFixed(2)}; forwarded/floor ${vsFloor.toFixed(2)}`)
    console.log(`targets (median of the per-round ratios): forwarded/bare ${ratio.toFixed(2)} (≥ 0.60) ${ratio >= 0.6 ? 'OK' : 'BELOW'}; forwarded/MQTT ${vsMqtt.toFixed(2)} (≥ 1.00) ${vsMqtt >= 1 ? 'OK' : 'BELOW'}; p99 forwarded/bare ${p99.toFixed(2)} (≤ 2) ${p99 <= 2 ? 'OK' : 'ABOVE'}`)

    console.log(`open loop, ${rate} req/s for ${openSeconds} s, latency from the scheduled send time:`)
    const openBare = await openLoop('bare')
    console.log(`  ${row(LABELS.bare, openBare)}`)
    const openForwarded = await openLoop('forwarded')
    console.log(`  ${row(LABELS.forwarded, openForwarded)}`)
    console.log(`  target: forwarded p99 ${openForwarded.p99} ms (≤ 20) ${openForwarded.p99 <= 20 ? 'OK' : 'ABOVE'}`)
    if (openForwarded.badStatuses?.['503']) {
      console.log(`  503 answers: the device had its ${MAX_IN_FLIGHT} requests in flight (contract §4) while the server fell behind; they count in the latencies`)
    }
  } finally {
    await Promise.all(devices.map((d) => d.stop()))
    await Promise.all([gateway.stop(), bare.stop(), floor.stop()])
  }
}
