import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LocalCluster } from '../../src/cluster/local-cluster.js'
import { withTimeout } from '../../src/lib/time.js'
import { startSimulation, type Simulation } from '../../src/sim/simulation.js'
import { clusterRunnable, linkHolders, startTestCluster } from '../helpers/test-cluster.js'

/**
 * Contract §13 "Rolling restart" and §17 "Rolling restarts lose no request": three instances
 * behind HAProxy configured from deploy/haproxy, 50 simulated machines linked through it,
 * operators asking machines for their position, platform devices writing telemetry and
 * heartbeats, all the time, and a burst of concurrent heartbeats at each SIGTERM; each instance
 * in turn gets SIGTERM, exits, starts again and is back
 * in HAProxy's rotation before the next; three rounds of that. No acknowledged write lost; every
 * machine re-links within 5 s of its link closing (1012); a request for a machine whose link is
 * moving is answered at once (502/503); every other request succeeds; no request is answered by
 * the load balancer itself, and none fails on the network.
 *
 * What makes it hold is the drain (docs/deploy.md, "Rolling restart"): the stopping instance
 * answers /readyz 503 while it still serves, and closes its listener only once HAProxy has taken
 * it out. With SHUTDOWN_DRAIN_SECONDS=0 the listener closes at SIGTERM, under HAProxy's requests:
 * ROLLING_RESTART_ENV='{"SHUTDOWN_DRAIN_SECONDS":"0"}' runs the test so, and it fails.
 */
const CONSOLE_TOKEN = 'rolling-console-token'
const MACHINES = 50
const ROUNDS = 3
const DEVICE_REQUEST_TIMEOUT_MS = 3000
/** HAProxy's health checks in this test: fast, so an instance is out (and back) within a few hundred ms. */
const CHECK_TIMING = 'inter 100ms fall 2 rise 2'
/** Contract §1: an instance stops within 10 s of SIGTERM (after its drain, which the check timing makes short). */
const STOP_LIMIT_MS = 10_000
/** Contract §13: a machine links again within 5 s of its link closing with 1012. */
const RELINK_LIMIT_MS = 5000
/** "Answered at once": far below the device request time-out, which would answer 504. */
const AT_ONCE_MS = 1000
/**
 * The gateway fails a moving machine's requests from the moment it closes the link; the machine
 * hears the close a moment later. A request is "for a machine whose link is moving" when it
 * overlaps the time from this long before the machine saw its link close until it registered again.
 */
const CLOSE_SEEN_LATE_MS = 500
const OPERATORS = 4
/**
 * At each SIGTERM, platform heartbeats sent this many at a time, wave after wave, for BURST_MS:
 * the moment a listener that closes too early would reset connections queued on it.
 */
const BURST_CONCURRENCY = 12
const BURST_MS = 150
/** Platform devices writing telemetry, each one write after the other's answer. */
const TELEMETRY_WRITERS = 3

const runnable = await clusterRunnable('the rolling-restart test', 'haproxy')

interface Sent {
  deviceId: string
  start: number
  end: number
  /** HTTP status, 0 for a network error. */
  status: number
  /** Answered by the load balancer itself: every instance sets x-request-id on every answer (§2). */
  byBalancer: boolean
  error?: string
}

/** Time from a machine's link closing until it registered again (undefined while it has not). */
interface Move {
  code: number
  closedAt: number
  registeredAt?: number
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const now = () => performance.now()
const ms = (value: number) => Math.round(value)

describe.skipIf(!runnable)('rolling restarts of three instances behind HAProxy (contract §13, §17)', () => {
  let cluster: LocalCluster
  let sim: Simulation | undefined
  let token: string
  /** The load runs while this is true; afterAll ends it should the test fail half-way. */
  let loading = false
  const prefix = `rr${process.pid}-`
  const instanceLog: string[] = []

  beforeAll(async () => {
    ;({ cluster, token } = await startTestCluster(
      3,
      // SHUTDOWN_DRAIN_SECONDS / SHUTDOWN_DRAIN_CHECKS come from the cluster (HAProxy: 5 s, fall + 1);
      // ROLLING_RESTART_ENV adds to them (e.g. SHUTDOWN_DRAIN_SECONDS=0, to see the test fail without the drain).
      { PLATFORM_CONSOLE_TOKEN: CONSOLE_TOKEN, DEVICE_REQUEST_TIMEOUT_MS: String(DEVICE_REQUEST_TIMEOUT_MS), ...JSON.parse(process.env.ROLLING_RESTART_ENV ?? '{}') },
      (instance, line) => {
        // Every 5xx is logged (§2): the 502s of moving machines are expected.
        if (line.includes('"code":"device_unavailable"')) return
        instanceLog.push(`${instance}: ${line}`)
        if (instanceLog.length > 200) instanceLog.shift()
      },
      { balancer: 'haproxy', checkTiming: CHECK_TIMING },
    ))
  }, 120_000)
  afterAll(async () => {
    loading = false
    await sim?.stop()
    await cluster?.stop()
  }, 60_000)

  const holders = (deviceIds: string[]) => linkHolders(cluster, deviceIds)

  /** Links held by one instance, from its own /metrics (not through the load balancer). */
  async function linksOf(url: string): Promise<number> {
    const text = await (await fetch(`${url}/metrics`)).text()
    const line = text.split('\n').find((l) => l.startsWith('fleetgate_device_links '))
    return Number(line?.split(' ')[1])
  }

  async function send(deviceId: string, url: string, init: RequestInit): Promise<Sent> {
    const start = now()
    try {
      const res = await fetch(url, { ...init, signal: AbortSignal.timeout(15_000) })
      const body = await res.text()
      const sent: Sent = { deviceId, start, end: now(), status: res.status, byBalancer: !res.headers.has('x-request-id') }
      if (!res.ok) sent.error = (/"error":"([a-z_]+)"/.exec(body) ?? [])[1] ?? body.slice(0, 80)
      return sent
    } catch (err) {
      return { deviceId, start, end: now(), status: 0, byBalancer: false, error: (err as Error).cause ? String((err as Error).cause) : (err as Error).message }
    }
  }

  it(
    `restarts every instance in turn, ${ROUNDS} rounds, under load: nothing lost, machines re-link within 5 s, moving links answered at once, everything else succeeds, nothing answered by HAProxy`,
    { timeout: 240_000 },
    async () => {
      const testStart = now()
      sim = await startSimulation({ url: cluster.url, devices: MACHINES, prefix, keysFile: null, heartbeatSeconds: 5 })
      const ids = sim.machines.map((m) => m.deviceId)

      // Every link close and registration the machines see.
      const moves = new Map<string, Move[]>(ids.map((id) => [id, []]))
      const otherCloses: string[] = []
      const stopped: string[] = []
      for (const { deviceId, agent } of sim.machines) {
        const own = moves.get(deviceId)!
        agent.on('disconnected', ({ code }) => {
          if (code !== 1012) otherCloses.push(`${deviceId} ${code}`)
          const open = own.at(-1)
          // A close before registering again (a re-link refused) extends the same move.
          if (!open || open.registeredAt !== undefined) own.push({ code, closedAt: now() })
        })
        agent.on('registered', () => {
          const open = own.at(-1)
          if (open && open.registeredAt === undefined) open.registeredAt = now()
        })
        agent.on('stopped', ({ reason }) => stopped.push(`${deviceId} ${reason}`))
      }
      const allRegistered = () => sim!.machines.every((m) => m.agent.state === 'registered')
      await expect.poll(allRegistered, { timeout: 30_000, interval: 100 }).toBe(true)
      const firstHolders = await holders(ids)
      expect(new Set(firstHolders.values()).size).toBe(3)

      // Platform devices: some write telemetry, three send heartbeats.
      const telemetryDevices = Array.from({ length: TELEMETRY_WRITERS }, (_, n) => `${prefix}iot${n + 1}`)
      const heartbeatDevices = [1, 2, 3].map((n) => `${prefix}beat${n}`)
      for (const id of [...telemetryDevices, ...heartbeatDevices]) {
        const res = await fetch(`${cluster.url}/api/admin/device/add`, {
          method: 'POST',
          headers: { 'x-console-token': CONSOLE_TOKEN, 'content-type': 'application/json' },
          body: JSON.stringify({ device_id: id, model: 'probe' }),
        })
        expect(res.status).toBe(201)
      }

      // The load, through HAProxy, from now until the end of the restarts.
      loading = true
      const operatorRequests: Sent[] = []
      const operator = async () => {
        while (loading) {
          const deviceId = ids[Math.floor(Math.random() * ids.length)]!
          operatorRequests.push(await send(deviceId, `${cluster.url}/api/v1/devices/${deviceId}/hardware/position`, { headers: { authorization: token } }))
          await pause(20)
        }
      }
      /** Acknowledged sequence numbers, per telemetry device. */
      const acked = new Map<string, number[]>(telemetryDevices.map((id) => [id, []]))
      const telemetry: Sent[] = []
      const base = Date.now()
      const telemetryWriter = async (deviceId: string) => {
        for (let seq = 0; loading; seq++) {
          const sent = await send(deviceId, `${cluster.url}/v1/device/${deviceId}/telemetry`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ ts: base + seq, values: { seq } }),
          })
          telemetry.push(sent)
          if (sent.status >= 200 && sent.status < 300) acked.get(deviceId)!.push(seq)
          await pause(10)
        }
      }
      const heartbeats: Sent[] = []
      let beat = 0
      const heartbeat = async () => {
        const n = beat++
        const deviceId = heartbeatDevices[n % heartbeatDevices.length]!
        heartbeats.push(
          await send(deviceId, `${cluster.url}/v1/device/heartbeat`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ device_id: deviceId, firmware_version: '1.0.0', uptime_s: n }),
          }),
        )
      }
      const heartbeater = async () => {
        while (loading) {
          await heartbeat()
          await pause(50)
        }
      }
      const burst = async (from: number) => {
        while (now() - from < BURST_MS) await Promise.all(Array.from({ length: BURST_CONCURRENCY }, heartbeat))
      }
      const loadStart = now()
      const load = Promise.all([...Array.from({ length: OPERATORS }, operator), ...telemetryDevices.map(telemetryWriter), heartbeater()])
      await expect.poll(() => operatorRequests.length > 50 && [...acked.values()].every((a) => a.length > 20), { timeout: 20_000 }).toBe(true)

      // Each round: each instance in turn gets SIGTERM, exits, starts again and is back in
      // HAProxy's rotation; then the next one, once its machines are linked again elsewhere.
      const steps: { round: number; id: string; links: number; signalled: number; stopMs: number; exitCode: number | null; downMs: number }[] = []
      const roundStarts: number[] = []
      for (let round = 1; round <= ROUNDS; round++) {
        roundStarts.push(now())
        for (let i = 0; i < cluster.instances.length; i++) {
          const instance = cluster.instances[i]!
          const links = await linksOf(instance.url)
          const signalled = now()
          const [exitCode] = await Promise.all([
            withTimeout(cluster.terminate(instance), STOP_LIMIT_MS + 5000, `${instance.id} did not exit within ${STOP_LIMIT_MS + 5000} ms of SIGTERM`),
            burst(signalled),
          ])
          const stopMs = now() - signalled
          const restarted = await cluster.startAgain(instance)
          expect((await fetch(`${restarted.url}/readyz`)).status).toBe(200)
          steps.push({ round, id: instance.id, links, signalled, stopMs, exitCode, downMs: now() - signalled })
          await expect.poll(allRegistered, { timeout: RELINK_LIMIT_MS * 2, interval: 50 }).toBe(true)
        }
      }
      loading = false
      await withTimeout(load, 30_000, 'the load did not stop')
      const loadEnd = now()

      // Every machine answers, through HAProxy, and has exactly one link.
      for (const id of ids) expect((await send(id, `${cluster.url}/api/v1/devices/${id}/hardware/position`, { headers: { authorization: token } })).status).toBe(200)
      const lastHolders = await holders(ids)
      const instanceIds = new Set(cluster.instances.map((i) => i.id))
      const unheld = ids.filter((id) => !instanceIds.has(lastHolders.get(id) ?? ''))
      const linkCounts = await Promise.all(cluster.instances.map((i) => linksOf(i.url)))
      const heldCounts = cluster.instances.map((i) => [...lastHolders.values()].filter((holder) => holder === i.id).length)

      // Every acknowledged write is there.
      // Read back in windows of 1,000 points (the query's limit per key); point seq has ts base + seq.
      const lost: string[] = []
      for (const [deviceId, seqs] of acked) {
        const stored = new Set<number>()
        for (let from = base; from <= base + Math.max(0, ...seqs); from += 1000) {
          const res = await fetch(`${cluster.url}/api/admin/device/${deviceId}/telemetry?keys=seq&from=${from}&to=${from + 999}&limit=1000`, { headers: { 'x-console-token': CONSOLE_TOKEN } })
          for (const [, v] of ((await res.json()) as { series: { seq?: [number, number][] } }).series.seq ?? []) stored.add(v)
        }
        lost.push(...seqs.filter((seq) => !stored.has(seq)).map((seq) => `${deviceId} #${seq}`))
      }
      const ackedCount = [...acked.values()].reduce((n, a) => n + a.length, 0)

      // Re-links: every close, from the moment the machine saw it until it registered again.
      const relinks = [...moves.values()].flat().map((m) => (m.registeredAt ?? Infinity) - m.closedAt)
      const slowRelinks = [...moves].flatMap(([id, list]) => list.filter((m) => (m.registeredAt ?? Infinity) - m.closedAt > RELINK_LIMIT_MS).map((m) => `${id} ${ms((m.registeredAt ?? now()) - m.closedAt)} ms`))

      // Requests: those for a moving machine may fail, at once, with the instances' 502 (not linked)
      // or 503 (cannot tell where it is linked); all others succeed. Any answer of HAProxy's own
      // (no x-request-id) and any network error is a failure, whatever it was for.
      const moving = (r: Sent) => moves.get(r.deviceId)!.some((m) => r.end >= m.closedAt - CLOSE_SEEN_LATE_MS && r.start <= (m.registeredAt ?? Infinity))
      const movingAnswer = (r: Sent) => !r.byBalancer && ((r.status === 502 && r.error === 'device_unavailable') || (r.status === 503 && r.error === 'service_unavailable'))
      const failed = operatorRequests.filter((r) => r.status !== 200)
      const movingFailures = failed.filter((r) => moving(r) && movingAnswer(r))
      const wronglyFailed = failed.filter((r) => !moving(r) || !movingAnswer(r))
      const writes = [...telemetry, ...heartbeats]
      const writeFailures = writes.filter((r) => r.status < 200 || r.status >= 300)
      const everything = [...operatorRequests, ...writes]
      const byBalancer = everything.filter((r) => r.byBalancer)
      const networkErrors = everything.filter((r) => r.status === 0)
      const slowestFailure = Math.max(0, ...failed.map((r) => r.end - r.start))
      const slowest = Math.max(...operatorRequests.map((r) => r.end - r.start))
      const describeRequest = (r: Sent) =>
        `${r.deviceId} ${r.status}${r.error ? ` ${r.error}` : ''}${r.byBalancer ? ' (HAProxy)' : ''} at ${ms(r.start - testStart)} ms after ${ms(r.end - r.start)} ms`

      /** Each round from its first SIGTERM to the next round's (the first from the start of the load, the last to its end). */
      const rounds = roundStarts.map((start, i) => ({ round: i + 1, from: i === 0 ? loadStart : start, to: roundStarts[i + 1] ?? loadEnd }))
      const inRound = (list: Sent[], r: { from: number; to: number }) => list.filter((s) => s.start >= r.from && s.start < r.to)

      console.log(
        [
          `rolling restarts behind HAProxy (${CHECK_TIMING}): ${ROUNDS} rounds of ${cluster.instances.length} instances, ${MACHINES} machines, ` +
            `${ms((loadEnd - loadStart) / 1000)} s of load, ${ms((now() - testStart) / 1000)} s from the first link`,
          ...rounds.map((r) => {
            const sent = inRound(everything, r)
            return (
              `  round ${r.round}: ${sent.length} requests sent, ${sent.filter((s) => s.byBalancer).length} answered by HAProxy, ` +
              `${sent.filter((s) => s.status === 0).length} network errors, ${inRound(movingFailures, r).length} 502/503 for moving machines, ` +
              `${inRound(wronglyFailed, r).length + inRound(writeFailures, r).length} other failures; ` +
              steps
                .filter((s) => s.round === r.round)
                .map((s) => `${s.id} ${s.links} links, exit ${s.exitCode} ${ms(s.stopMs)} ms after SIGTERM, back in rotation ${ms(s.downMs)} ms after`)
                .join('; ')
            )
          }),
          `  operator requests: ${operatorRequests.length}, ${movingFailures.length} answered 502/503 for a moving machine (slowest ${ms(slowestFailure)} ms), slowest of all ${ms(slowest)} ms`,
          `  re-links after a close: ${relinks.length} (codes ${[...new Set([...moves.values()].flat().map((m) => m.code))].join(', ')}), ` +
            `longest ${ms(Math.max(0, ...relinks))} ms, median ${ms([...relinks].sort((a, b) => a - b)[Math.floor(relinks.length / 2)] ?? 0)} ms`,
          `  telemetry: ${ackedCount} acknowledged of ${telemetry.length}, ${lost.length} lost; platform heartbeats: ${heartbeats.length}, ${heartbeats.filter((r) => r.status >= 200 && r.status < 300).length} acknowledged`,
          `  in all: ${everything.length} requests, ${byBalancer.length} answered by HAProxy, ${networkErrors.length} network errors, ${movingFailures.length} 502/503 for moving machines, ` +
            `${wronglyFailed.length + writeFailures.length} other failures`,
          `  links at the end: ${linkCounts.join(' + ')} = ${linkCounts.reduce((a, b) => a + b, 0)}; closes other than 1012: ${otherCloses.length ? `${otherCloses.length} (${otherCloses.slice(0, 5).join(', ')}${otherCloses.length > 5 ? ', …' : ''})` : 'none'}`,
        ].join('\n'),
      )
      // HAProxy's own account: why it took instances out (a stopping instance: its 503 "draining"),
      // and the requests that went wrong on its side (it logs only those and 5xx answers: option
      // dontlog-normal): a termination state other than ----, or a retry.
      const balancerLines = (await cluster.balancerLog()).split('\n').filter((line) => !line.startsWith('['))
      const outReasons = new Map<string, number>()
      for (const line of balancerLines) {
        const reason = /^Server fleetgate\/\S+ is DOWN, reason: ([^,]+(?:, code: \d+)?)/.exec(line)?.[1]
        if (reason) outReasons.set(reason, (outReasons.get(reason) ?? 0) + 1)
      }
      console.log(`  HAProxy took an instance out ${[...outReasons.values()].reduce((a, b) => a + b, 0)} times: ${[...outReasons].map(([r, n]) => `${n} × ${r}`).join('; ')}`)
      const balancerTrouble = balancerLines.filter((line) => {
        const [, state, retries] = / (\S{4}) \d+\/\d+\/\d+\/\d+\/(\+?\d+) /.exec(line) ?? []
        return state !== undefined && (state !== '----' || retries !== '0')
      })
      if (balancerTrouble.length > 0) console.log(['  HAProxy log of requests failed or retried on its side:', ...balancerTrouble.slice(0, 20).map((l) => `    ${l}`)].join('\n'))
      if (wronglyFailed.length > 0 || writeFailures.length > 0 || slowRelinks.length > 0) {
        console.log(
          [
            ...wronglyFailed.slice(0, 20).map((r) => `  failed request: ${describeRequest(r)}`),
            ...writeFailures.slice(0, 20).map((r) => `  failed write: ${describeRequest(r)}`),
            ...slowRelinks.slice(0, 20).map((s) => `  slow re-link: ${s}`),
            ...steps.map((s) => `  round ${s.round}: ${s.id} SIGTERM at ${ms(s.signalled - testStart)} ms`),
            '  instance log (last lines):',
            ...instanceLog.slice(-40),
          ].join('\n'),
        )
      }

      for (const step of steps) {
        expect(step.exitCode).toBe(0)
        expect(step.stopMs).toBeLessThanOrEqual(STOP_LIMIT_MS)
      }
      // §17: not one request answered by the load balancer itself, not one network error.
      expect(byBalancer.map(describeRequest)).toEqual([])
      expect(networkErrors.map(describeRequest)).toEqual([])
      expect(lost).toEqual([])
      expect(writeFailures.map(describeRequest)).toEqual([])
      expect(stopped).toEqual([])
      expect(otherCloses).toEqual([])
      // Every machine of a restarted instance saw its link close with 1012 and came back in time.
      expect(relinks.length).toBeGreaterThanOrEqual(steps.reduce((n, s) => n + s.links, 0))
      expect(slowRelinks).toEqual([])
      expect(wronglyFailed.map(describeRequest)).toEqual([])
      expect(failed.filter((r) => r.status === 504).map(describeRequest)).toEqual([])
      expect(slowestFailure).toBeLessThan(AT_ONCE_MS)
      expect(unheld).toEqual([])
      // What each instance holds is what the database says it holds: one link per machine.
      expect(linkCounts).toEqual(heldCounts)
      expect(linkCounts.reduce((a, b) => a + b, 0)).toBe(MACHINES)
    },
  )
})
