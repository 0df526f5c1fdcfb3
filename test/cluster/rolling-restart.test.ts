import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LocalCluster } from '../../src/cluster/local-cluster.js'
import { withTimeout } from '../../src/lib/time.js'
import { startSimulation, type Simulation } from '../../src/sim/simulation.js'
import { clusterRunnable, linkHolders, startTestCluster } from '../helpers/test-cluster.js'

/**
 * Contract §13, "Rolling restart": three instances behind nginx, 50 simulated machines linked
 * through nginx, operators asking machines for their position, platform devices writing
 * telemetry and heartbeats, all the time; each instance in turn gets SIGTERM, exits, starts
 * again and is ready before the next. No acknowledged write lost; every machine re-links
 * within 5 s of its link closing (1012); a request for a machine whose link is moving is
 * answered at once (502/503); every other request succeeds.
 */
const CONSOLE_TOKEN = 'rolling-console-token'
const MACHINES = 50
const DEVICE_REQUEST_TIMEOUT_MS = 3000
/** Contract §1: an instance stops within 10 s of SIGTERM. */
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
 * The one nginx 503 `server_busy` a write may get: its connection to the stopping instance was
 * still in the kernel's accept queue when the instance closed its listening socket (right after
 * SIGTERM), which resets it; nginx never resends a POST it sent (docs/deploy.md, "Rolling
 * restart"). Such a request overlaps the first moments after a SIGTERM; a server_busy at any
 * other time has another cause, and fails the test.
 */
const LISTENER_CLOSE_WINDOW_MS = 1000

const runnable = await clusterRunnable('the rolling-restart test')

interface Sent {
  deviceId: string
  start: number
  end: number
  /** HTTP status, 0 for a network error. */
  status: number
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

describe.skipIf(!runnable)('rolling restart of three instances behind nginx (contract §13)', () => {
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
      { PLATFORM_CONSOLE_TOKEN: CONSOLE_TOKEN, DEVICE_REQUEST_TIMEOUT_MS: String(DEVICE_REQUEST_TIMEOUT_MS) },
      (instance, line) => {
        // Every 5xx is logged (§2): the 502s of moving machines are expected.
        if (line.includes('"code":"device_unavailable"')) return
        instanceLog.push(`${instance}: ${line}`)
        if (instanceLog.length > 200) instanceLog.shift()
      },
    ))
  }, 120_000)
  afterAll(async () => {
    loading = false
    await sim?.stop()
    await cluster?.stop()
  }, 60_000)

  const holders = (deviceIds: string[]) => linkHolders(cluster, deviceIds)

  /** Links held by one instance, from its own /metrics (not through nginx). */
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
      const sent: Sent = { deviceId, start, end: now(), status: res.status }
      if (!res.ok) sent.error = (/"error":"([a-z_]+)"/.exec(body) ?? [])[1] ?? body.slice(0, 80)
      return sent
    } catch (err) {
      return { deviceId, start, end: now(), status: 0, error: (err as Error).cause ? String((err as Error).cause) : (err as Error).message }
    }
  }

  /**
   * A device's write: nginx's own 503 `server_busy` (nothing stored: the instance never accepted
   * the connection, see LISTENER_CLOSE_WINDOW_MS) is retried once after its Retry-After, as a
   * device does (§2); each such retry is counted, printed and must fall in that window.
   */
  const busyRetries: Sent[] = []
  async function write(deviceId: string, url: string, init: RequestInit): Promise<Sent> {
    const first = await send(deviceId, url, init)
    if (first.status !== 503 || first.error !== 'server_busy') return first
    busyRetries.push(first)
    await pause(1000)
    return send(deviceId, url, init)
  }

  it('restarts every instance in turn under load: nothing lost, machines re-link within 5 s, moving links answered at once, everything else succeeds', { timeout: 150_000 }, async () => {
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

    // Platform devices: one writes telemetry, three send heartbeats.
    const telemetryDevice = `${prefix}iot`
    const heartbeatDevices = [1, 2, 3].map((n) => `${prefix}beat${n}`)
    for (const id of [telemetryDevice, ...heartbeatDevices]) {
      const res = await fetch(`${cluster.url}/api/admin/device/add`, {
        method: 'POST',
        headers: { 'x-console-token': CONSOLE_TOKEN, 'content-type': 'application/json' },
        body: JSON.stringify({ device_id: id, model: 'probe' }),
      })
      expect(res.status).toBe(201)
    }

    // The load, through nginx, from now until the end of the restarts.
    loading = true
    const operatorRequests: Sent[] = []
    const operator = async () => {
      while (loading) {
        const deviceId = ids[Math.floor(Math.random() * ids.length)]!
        operatorRequests.push(await send(deviceId, `${cluster.url}/api/v1/devices/${deviceId}/hardware/position`, { headers: { authorization: token } }))
        await pause(20)
      }
    }
    const acked: number[] = []
    const telemetry: Sent[] = []
    const base = Date.now()
    const telemetryWriter = async () => {
      for (let seq = 0; loading; seq++) {
        const sent = await write(telemetryDevice, `${cluster.url}/v1/device/${telemetryDevice}/telemetry`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ ts: base + seq, values: { seq } }),
        })
        telemetry.push(sent)
        if (sent.status >= 200 && sent.status < 300) acked.push(seq)
        await pause(10)
      }
    }
    const heartbeats: Sent[] = []
    const heartbeater = async () => {
      for (let n = 0; loading; n++) {
        const deviceId = heartbeatDevices[n % heartbeatDevices.length]!
        heartbeats.push(
          await write(deviceId, `${cluster.url}/v1/device/heartbeat`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ device_id: deviceId, firmware_version: '1.0.0', uptime_s: n }),
          }),
        )
        await pause(50)
      }
    }
    const load = Promise.all([...Array.from({ length: OPERATORS }, operator), telemetryWriter(), heartbeater()])
    await expect.poll(() => operatorRequests.length > 50 && acked.length > 20, { timeout: 20_000 }).toBe(true)

    // Each instance in turn: SIGTERM, exit, start again, ready; then the next one.
    const steps: { id: string; links: number; signalled: number; stopMs: number; exitCode: number | null; downMs: number }[] = []
    for (let i = 0; i < cluster.instances.length; i++) {
      const instance = cluster.instances[i]!
      const links = await linksOf(instance.url)
      const signalled = now()
      const exitCode = await withTimeout(cluster.terminate(instance), STOP_LIMIT_MS + 5000, `${instance.id} did not exit within ${STOP_LIMIT_MS + 5000} ms of SIGTERM`)
      const stopMs = now() - signalled
      const restarted = await cluster.startAgain(instance)
      expect((await fetch(`${restarted.url}/readyz`)).status).toBe(200)
      steps.push({ id: instance.id, links, signalled, stopMs, exitCode, downMs: now() - signalled })
      // Its machines are linked again (elsewhere) before the next instance goes.
      await expect.poll(allRegistered, { timeout: RELINK_LIMIT_MS * 2, interval: 50 }).toBe(true)
    }
    loading = false
    await withTimeout(load, 30_000, 'the load did not stop')

    // Every machine answers, through nginx, and has exactly one link.
    for (const id of ids) expect((await send(id, `${cluster.url}/api/v1/devices/${id}/hardware/position`, { headers: { authorization: token } })).status).toBe(200)
    const lastHolders = await holders(ids)
    const instanceIds = new Set(cluster.instances.map((i) => i.id))
    const unheld = ids.filter((id) => !instanceIds.has(lastHolders.get(id) ?? ''))
    const linkCounts = await Promise.all(cluster.instances.map((i) => linksOf(i.url)))
    const heldCounts = cluster.instances.map((i) => [...lastHolders.values()].filter((holder) => holder === i.id).length)

    // A server_busy must come from a listening socket closing under it: overlap the moments after a SIGTERM.
    const afterSigterm = (r: Sent) => steps.find((s) => r.end >= s.signalled && r.start <= s.signalled + LISTENER_CLOSE_WINDOW_MS)
    const describeBusy = (r: Sent) => {
      const step = afterSigterm(r)
      return `${r.deviceId} ${step ? `${ms(r.start - step.signalled)}…${ms(r.end - step.signalled)} ms after the SIGTERM of ${step.id}` : `at ${ms(r.start - testStart)} ms, long after any SIGTERM`}`
    }
    const busyElsewhen = busyRetries.filter((r) => !afterSigterm(r))

    // Every acknowledged write is there.
    // Read back in windows of 1,000 points (the query's limit per key); point seq has ts base + seq.
    const stored = new Set<number>()
    for (let from = base; from <= base + Math.max(0, ...acked); from += 1000) {
      const res = await fetch(`${cluster.url}/api/admin/device/${telemetryDevice}/telemetry?keys=seq&from=${from}&to=${from + 999}&limit=1000`, { headers: { 'x-console-token': CONSOLE_TOKEN } })
      for (const [, v] of ((await res.json()) as { series: { seq?: [number, number][] } }).series.seq ?? []) stored.add(v)
    }
    const lost = acked.filter((seq) => !stored.has(seq))

    // Re-links: every close, from the moment the machine saw it until it registered again.
    const relinks = [...moves.values()].flat().map((m) => (m.registeredAt ?? Infinity) - m.closedAt)
    const slowRelinks = [...moves].flatMap(([id, list]) => list.filter((m) => (m.registeredAt ?? Infinity) - m.closedAt > RELINK_LIMIT_MS).map((m) => `${id} ${ms((m.registeredAt ?? now()) - m.closedAt)} ms`))

    // Requests: those for a moving machine may fail, at once, with the instances' 502 (not linked)
    // or 503 (cannot tell where it is linked); all others succeed. nginx's own 503 (server_busy:
    // no instance reachable) is no answer about the machine: a failure.
    const moving = (r: Sent) => moves.get(r.deviceId)!.some((m) => r.end >= m.closedAt - CLOSE_SEEN_LATE_MS && r.start <= (m.registeredAt ?? Infinity))
    const failed = operatorRequests.filter((r) => r.status !== 200)
    const movingAnswer = (r: Sent) => (r.status === 502 && r.error === 'device_unavailable') || (r.status === 503 && r.error === 'service_unavailable')
    const wronglyFailed = failed.filter((r) => !moving(r) || !movingAnswer(r))
    const slowestFailure = Math.max(0, ...failed.map((r) => r.end - r.start))
    const slowest = Math.max(...operatorRequests.map((r) => r.end - r.start))
    /** Counts by status (2xx, 502, 503, 504, network errors always shown), then by error code. */
    const byStatus = (list: Sent[], ok: string) => {
      const counts = new Map<string, number>([[ok, 0], ['502', 0], ['503', 0], ['504', 0], ['network errors', 0]])
      const codes = new Map<string, number>()
      for (const r of list) {
        const key = r.status === 0 ? 'network errors' : r.status >= 200 && r.status < 300 ? ok : String(r.status)
        counts.set(key, (counts.get(key) ?? 0) + 1)
        if (r.error) codes.set(r.error, (codes.get(r.error) ?? 0) + 1)
      }
      const detail = [...codes].map(([k, v]) => `${k} ${v}`).join(', ')
      return [...counts].map(([k, v]) => `${k}: ${v}`).join(', ') + (detail ? `; ${detail}` : '')
    }
    const writeFailures = [...telemetry, ...heartbeats].filter((r) => r.status < 200 || r.status >= 300)
    const describeRequest = (r: Sent) => `${r.deviceId} ${r.status}${r.error ? ` ${r.error}` : ''} at ${ms(r.start - testStart)} ms after ${ms(r.end - r.start)} ms`

    console.log(
      [
        `rolling restart of ${steps.length} instances behind nginx, ${MACHINES} machines, ${ms((now() - testStart) / 1000)} s from the first link:`,
        ...steps.map((s) => `  ${s.id}: ${s.links} links; exit ${s.exitCode} ${ms(s.stopMs)} ms after SIGTERM; ready again ${ms(s.downMs)} ms after it`),
        `  operator requests: ${operatorRequests.length} (${byStatus(operatorRequests, '200')}); slowest failed ${ms(slowestFailure)} ms, slowest of all ${ms(slowest)} ms; ` +
          `failed for a machine not moving, or with another answer than 502 device_unavailable / 503 service_unavailable: ${wronglyFailed.length}`,
        `  re-links after a close: ${relinks.length} (codes ${[...new Set([...moves.values()].flat().map((m) => m.code))].join(', ')}), ` +
          `longest ${ms(Math.max(0, ...relinks))} ms, median ${ms([...relinks].sort((a, b) => a - b)[Math.floor(relinks.length / 2)] ?? 0)} ms`,
        `  telemetry: ${acked.length} acknowledged, ${telemetry.length - acked.length} refused (${byStatus(telemetry, '2xx')}), ${lost.length} lost; ` +
          `platform heartbeats: ${heartbeats.length} (${byStatus(heartbeats, '2xx')}); nginx 503 server_busy answered, then retried: ${busyRetries.length}${busyRetries.length ? ` (${busyRetries.map(describeBusy).join('; ')})` : ''}`,
        `  links at the end: ${linkCounts.join(' + ')} = ${linkCounts.reduce((a, b) => a + b, 0)}; closes other than 1012: ${otherCloses.length ? `${otherCloses.length} (${otherCloses.slice(0, 5).join(', ')}${otherCloses.length > 5 ? ', …' : ''})` : 'none'}`,
      ].join('\n'),
    )
    // nginx's own account of every upstream failure other than a refused connect and the instance
    // it then leaves out for a while (it passes those requests on to another): what an nginx 503
    // server_busy came from.
    const nginxErrors = (await cluster.balancerLog())
      .split('\n')
      .filter((l) => l.includes('upstream') && !l.includes('(111: Connection refused)') && !l.includes('upstream server temporarily disabled'))
    if (nginxErrors.length > 0) console.log(['  nginx upstream errors (other than refused connects):', ...nginxErrors.slice(0, 20).map((l) => `    ${l}`)].join('\n'))
    if (wronglyFailed.length > 0 || writeFailures.length > 0 || slowRelinks.length > 0) {
      console.log(
        [
          ...wronglyFailed.slice(0, 20).map((r) => `  failed request: ${describeRequest(r)}`),
          ...writeFailures.slice(0, 20).map((r) => `  failed write: ${describeRequest(r)}`),
          ...slowRelinks.slice(0, 20).map((s) => `  slow re-link: ${s}`),
          ...steps.map((s, i) => `  restart ${i + 1}: ${s.id}`),
          '  instance log (last lines):',
          ...instanceLog.slice(-40),
        ].join('\n'),
      )
    }

    for (const step of steps) {
      expect(step.exitCode).toBe(0)
      expect(step.stopMs).toBeLessThanOrEqual(STOP_LIMIT_MS)
    }
    expect(lost).toEqual([])
    expect(writeFailures.map(describeRequest)).toEqual([])
    // The residual race of docs/deploy.md: only as a listener closes, rare, nothing stored, and the retry succeeds.
    expect(busyElsewhen.map(describeBusy)).toEqual([])
    expect(busyRetries.length).toBeLessThanOrEqual(Math.ceil((telemetry.length + heartbeats.length) / 100))
    expect(stopped).toEqual([])
    expect(otherCloses).toEqual([])
    // Every machine of a restarted instance saw its link close with 1012 and came back in time.
    expect(relinks.length).toBeGreaterThanOrEqual(steps.reduce((n, s) => n + s.links, 0))
    expect(slowRelinks).toEqual([])
    expect(wronglyFailed.map(describeRequest)).toEqual([])
    expect(failed.filter((r) => r.status === 504 || r.status === 0).map(describeRequest)).toEqual([])
    expect(slowestFailure).toBeLessThan(AT_ONCE_MS)
    expect(unheld).toEqual([])
    // What each instance holds is what the database says it holds: one link per machine.
    expect(linkCounts).toEqual(heldCounts)
    expect(linkCounts.reduce((a, b) => a + b, 0)).toBe(MACHINES)
  })
})
