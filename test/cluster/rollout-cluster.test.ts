import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LocalCluster, LocalInstance } from '../../src/cluster/local-cluster.js'
import { generateFirmwareKeys, publicKeyPem } from '../../src/firmware/firmware-keys.js'
import { signImage } from '../../src/firmware/sign-image.js'
import { startSimulation, type Simulation, type SimulatedMachine } from '../../src/sim/simulation.js'
import { clusterRunnable, linkHolders, startTestCluster } from '../helpers/test-cluster.js'

const MACHINES = 30
const runnable = await clusterRunnable('the three-instance rollout test')
const keys = generateFirmwareKeys()
const OPERATOR = { id: 'test', username: 'test', role: 'admin' }

interface OfferSeen {
  deviceId: string
  rolloutId: string
  /** The machine's task state when the offer arrived. */
  taskState: string | undefined
  /** Whether the machine had already reported `installed` for that rollout. */
  afterInstalled: boolean
}

/**
 * §14 across three instances behind nginx (§13): a rollout over 30 simulated machines, 3 of them
 * failing their install and 5 placing parts when their stage opens, with one instance killed on
 * the way. It pauses on the failure threshold, is resumed, and completes; no offer ever reaches a
 * machine while its task runs, and no machine is offered the release twice.
 */
describe.skipIf(!runnable)('a rollout on three instances behind nginx', () => {
  let cluster: LocalCluster
  let sim: Simulation | undefined
  let token: string
  const prefix = `rc${process.pid}-`
  const failing = [`${prefix}01`, `${prefix}02`, `${prefix}03`]

  beforeAll(async () => {
    ;({ cluster, token } = await startTestCluster(3, {
      PLATFORM_CONSOLE_TOKEN: 'rollout-cluster-token',
      FIRMWARE_ROOT_PUBKEY: publicKeyPem(keys.root.publicKey),
      ROLLOUT_STEP_TIMEOUT_SECONDS: '60',
    }))
  }, 120_000)
  afterAll(async () => {
    await sim?.stop()
    await cluster?.stop()
  }, 60_000)

  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${cluster.url}${path}`, {
      method,
      headers: { authorization: token, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    return { status: res.status, body: (await res.json()) as any } // eslint-disable-line @typescript-eslint/no-explicit-any
  }

  const holders = () => linkHolders(cluster, sim!.machines.map((m) => m.deviceId))

  /** Starts a long task on the machine (100 items at 400 ms each). */
  async function startLongTask(m: SimulatedMachine): Promise<void> {
    const items = Array.from({ length: 100 }, (_, i) => ({ component: `R${i}`, x: i, y: i, angle: 0 }))
    const order = await m.machine.routes.dispatch({ method: 'POST', path: '/orders', query: {}, body: { name: 'long board', items }, user: OPERATOR })
    const orderId = (order.data as { order: { id: string } }).order.id
    const started = await m.machine.routes.dispatch({ method: 'POST', path: '/tasks/start', query: {}, body: { order_id: orderId }, user: OPERATOR })
    expect(started.status).toBe(200)
  }

  it('pauses on the threshold, resumes, survives a SIGKILL and completes, never offering to a machine placing parts', { timeout: 240_000 }, async () => {
    sim = await startSimulation({
      url: cluster.url,
      devices: MACHINES,
      prefix,
      keysFile: null,
      heartbeatSeconds: 5,
      failFirmware: failing,
      firmwareInstallMs: 300,
      machine: { placeMsPerItem: 400 },
    })
    await sim.registered()
    const byId = new Map(sim.machines.map((m) => [m.deviceId, m]))
    const offers: OfferSeen[] = []
    const taskChecks = new Map<string, number>()
    const installed = new Set<string>()
    for (const m of sim.machines) {
      m.agent.on('firmware', (status) => {
        if (status.state === 'installed') installed.add(`${m.deviceId} ${status.rollout_id}`)
      })
      m.agent.on('offer', (offer) =>
        offers.push({
          deviceId: m.deviceId,
          rolloutId: offer.rollout_id,
          taskState: m.machine.tasks.current()?.state,
          afterInstalled: installed.has(`${m.deviceId} ${offer.rollout_id}`),
        }),
      )
      m.agent.on('request', (frame) => {
        if (frame.path === '/tasks/current') taskChecks.set(m.deviceId, (taskChecks.get(m.deviceId) ?? 0) + 1)
      })
    }

    const release = signImage({
      payload: Buffer.from('controller 4.0.0 '.repeat(2000)),
      version: { major: 4, minor: 0, revision: 0, build_num: 400 },
      product: { magic: 'PNP-SLAVE', hw_version: 3, fw_version: 7, git_sha: 'c0ffee1', timestamp: '2026-11-26T00:00:00Z' },
      signingKey: keys.signing.privateKey,
      signerCert: keys.signerCert,
      release: `${prefix}fw-4.0.0`,
    })
    const form = new FormData()
    form.append('image', new Blob([release.image]), 'system.bin')
    form.append('manifest', JSON.stringify(release.manifest))
    expect((await fetch(`${cluster.url}/api/v1/admin/firmware/slave/releases`, { method: 'POST', body: form, headers: { authorization: token } })).status).toBe(201)

    const ids = sim.machines.map((m) => m.deviceId)
    const created = await api('POST', '/api/v1/admin/firmware/slave/rollouts', { release_id: `${prefix}fw-4.0.0`, devices: ids, stages: [10, 50, 100], max_failure_ratio: 0.05 })
    expect(created.status).toBe(201)
    const rolloutId: string = created.body.rollout.rollout_id
    const members = (await api('GET', `/api/v1/admin/firmware/slave/rollouts/${rolloutId}?limit=1000`)).body.devices as { device_id: string; stage: number }[]
    // Five machines of the last stage are placing parts by the time it opens.
    const busy = members.filter((d) => d.stage === 2 && !failing.includes(d.device_id)).slice(0, 5).map((d) => d.device_id)
    expect(busy).toHaveLength(5)
    for (const id of busy) await startLongTask(byId.get(id)!)

    // The driver: a plain loop, so every assertion below runs once, on what the loop recorded
    // (asserting inside expect.poll's callback would be retried, and swallowed, by the poll).
    let pauses = 0
    let killed: string | undefined
    let stoppedTasks = false
    let stage2OpenedChecks: Map<string, number> | undefined
    const resumeStatuses: number[] = []
    const stopStatuses: number[] = []
    const started = Date.now()
    let state = ''
    for (let previous = ''; Date.now() - started < 200_000; previous = state, await new Promise((resolve) => setTimeout(resolve, 250))) {
      const { rollout } = (await api('GET', `/api/v1/admin/firmware/slave/rollouts/${rolloutId}`)).body
      state = rollout.state
      if (state === 'completed') break
      if (state === 'paused') {
        if (previous !== 'paused') pauses++
        if (!killed) {
          // Kill the instance holding the most links while the rollout waits; resume on the others.
          const count = new Map<string, number>()
          for (const holder of (await holders()).values()) if (holder) count.set(holder, (count.get(holder) ?? 0) + 1)
          const victimId = [...count].sort((a, b) => b[1] - a[1])[0]![0]
          killed = victimId
          await cluster.kill(cluster.instances.find((i) => i.id === victimId) as LocalInstance)
        }
        resumeStatuses.push((await api('POST', `/api/v1/admin/firmware/slave/rollouts/${rolloutId}/resume`)).status)
      }
      if (rollout.stage === 2 && !stoppedTasks) {
        stage2OpenedChecks ??= new Map(busy.map((id) => [id, taskChecks.get(id) ?? 0]))
        // Once each busy machine was asked (and said its task runs), its operator stops the task.
        if (busy.every((id) => (taskChecks.get(id) ?? 0) > stage2OpenedChecks!.get(id)!)) {
          for (const id of busy) stopStatuses.push((await byId.get(id)!.machine.routes.dispatch({ method: 'POST', path: '/tasks/stop', query: {}, body: null, user: OPERATOR })).status)
          stoppedTasks = true
        }
      }
    }
    expect(state).toBe('completed')
    expect(resumeStatuses.length).toBeGreaterThanOrEqual(1)
    expect(resumeStatuses.every((status) => status === 200)).toBe(true)
    expect(stopStatuses).toEqual(busy.map(() => 200))
    const seconds = (Date.now() - started) / 1000

    const final = (await api('GET', `/api/v1/admin/firmware/slave/rollouts/${rolloutId}?limit=1000`)).body
    expect(final.rollout.counts).toMatchObject({ installed: MACHINES - failing.length, failed: failing.length, waiting: 0, pending: 0 })
    for (const d of final.devices) expect(d.state).toBe(failing.includes(d.device_id) ? 'failed' : 'installed')
    expect(pauses).toBeGreaterThanOrEqual(1)
    expect(killed).toBeDefined()

    const duringTasks = offers.filter((o) => o.taskState === 'running' || o.taskState === 'paused')
    expect(duringTasks).toEqual([])
    // Nothing is offered again to a machine that reported installed (§14); every machine was offered.
    expect(offers.filter((o) => o.afterInstalled)).toEqual([])
    expect(new Set(offers.filter((o) => o.rolloutId === rolloutId).map((o) => o.deviceId)).size).toBe(MACHINES)
    const repeated = offers.length - MACHINES

    // The release became the active one, and the machines report it in their heartbeats.
    const releases = (await api('GET', '/api/v1/admin/firmware/slave/releases')).body.releases as { release_id: string; state: string }[]
    expect(releases.find((r) => r.release_id === `${prefix}fw-4.0.0`)?.state).toBe('active')
    await expect.poll(async () => (await api('GET', `/api/v1/devices/${busy[0]}`)).body.device.last_status?.firmware, { timeout: 15_000 }).toBe(release.manifest.display_version)
    console.log(
      `rollout cluster: ${MACHINES} machines on 3 instances (one killed: ${killed}), ${pauses} automatic pause(s), ${offers.length} offers (${duringTasks.length} while a task ran, ${repeated} repeated after a lost link), ` +
        `busy machines asked ${busy.map((id) => taskChecks.get(id)).join('/')} times, completed in ${seconds.toFixed(1)} s`,
    )
  })
})
