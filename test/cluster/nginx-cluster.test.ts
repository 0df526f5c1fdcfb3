import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LocalCluster, LocalInstance } from '../../src/cluster/local-cluster.js'
import { startSimulation, type Simulation } from '../../src/sim/simulation.js'
import { clusterRunnable, linkHolders, startTestCluster } from '../helpers/test-cluster.js'
import { commandLineOf, nodeFlagsBefore } from '../helpers/node-command-line.js'
import { SseClient } from '../events/sse-client.js'

const CONSOLE_TOKEN = 'cluster-console-token'
const runnable = await clusterRunnable('the three-instances-behind-nginx test')

describe.skipIf(!runnable)('three instances behind nginx (deploy/nginx), PostgreSQL and NATS', () => {
  let cluster: LocalCluster
  let sim: Simulation | undefined
  let token: string
  const prefix = `ngx${process.pid}-`

  beforeAll(async () => {
    ;({ cluster, token } = await startTestCluster(3, { PLATFORM_CONSOLE_TOKEN: CONSOLE_TOKEN, DEVICE_REQUEST_TIMEOUT_MS: '3000' }))
  }, 120_000)
  afterAll(async () => {
    await sim?.stop()
    await cluster?.stop()
  }, 60_000)

  const api = (path: string, init: RequestInit = {}) =>
    fetch(`${cluster.url}${path}`, { ...init, headers: { authorization: token, 'content-type': 'application/json', ...(init.headers as Record<string, string>) } })
  const position = async (deviceId: string) => (await api(`/api/v1/devices/${deviceId}/hardware/position`)).status

  const holders = (deviceIds: string[]) => linkHolders(cluster, deviceIds)

  it('starts every instance as plain `node <cli> serve`, with no Node flags', () => {
    expect(cluster.instances).toHaveLength(3)
    for (const instance of cluster.instances) {
      const commandLine = commandLineOf(instance.child.pid!)
      expect(nodeFlagsBefore(commandLine, 'main.js')).toEqual([])
      expect(commandLine.slice(-1)).toEqual(['serve'])
    }
  })

  it('serves machines linked through nginx from every instance, and after a SIGKILL they re-link and answer again with no acknowledged telemetry lost', { timeout: 180_000 }, async () => {
    sim = await startSimulation({ url: cluster.url, devices: 6, prefix, keysFile: null, heartbeatSeconds: 5 })
    await sim.registered()
    const ids = sim.machines.map((m) => m.deviceId)

    // nginx spreads both the links and the requests over the instances: every request reaches its machine.
    const linkedTo = await holders(ids)
    expect(new Set(linkedTo.values()).size).toBeGreaterThan(1)
    for (let round = 0; round < 3; round++) for (const id of ids) expect(await position(id)).toBe(200)

    // Acknowledged telemetry, written through nginx the whole time.
    const platformId = `${prefix}iot`
    expect((await fetch(`${cluster.url}/api/admin/device/add`, { method: 'POST', headers: { 'x-console-token': CONSOLE_TOKEN, 'content-type': 'application/json' }, body: JSON.stringify({ device_id: platformId, model: 'probe' }) })).status).toBe(201)
    const acked: number[] = []
    let writeFailures = 0
    let writing = true
    const base = Date.now()
    const writer = (async () => {
      for (let seq = 0; writing && seq < 900; seq++) {
        try {
          const res = await fetch(`${cluster.url}/v1/device/${platformId}/telemetry`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ts: base + seq, values: { seq } }) })
          if (res.ok) acked.push(seq)
          else writeFailures++
        } catch {
          writeFailures++
        }
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
    })()
    await expect.poll(() => acked.length, { timeout: 30_000 }).toBeGreaterThan(20)

    // Event streams through nginx (unbuffered): they start at once and report the re-links below.
    // Three of them, spread over the instances: the killed instance's own stream ends with it.
    const streams: SseClient[] = []
    for (let i = 0; i < 3; i++) streams.push(await SseClient.open(`${cluster.url}/api/v1/events`, token))
    for (const stream of streams) {
      expect(stream.status).toBe(200)
      await expect.poll(() => stream.lines[0]).toBe('retry: 3000')
    }

    // SIGKILL the instance holding the most machines.
    const counts = new Map<string, number>()
    for (const holder of linkedTo.values()) if (holder) counts.set(holder, (counts.get(holder) ?? 0) + 1)
    const victimId = [...counts].sort((x, y) => y[1] - x[1])[0]![0]
    const victim = cluster.instances.find((i) => i.id === victimId) as LocalInstance
    const orphans = ids.filter((id) => linkedTo.get(id) === victimId)
    const killedAt = Date.now()
    await cluster.kill(victim)

    // Each orphaned machine re-links (through nginx, to a live instance) and answers again.
    let failedRequests = 0
    const backAt = new Map<string, number>()
    await expect
      .poll(
        async () => {
          for (const id of orphans) {
            if (backAt.has(id)) continue
            const status = await position(id).catch(() => 0)
            if (status === 200) backAt.set(id, Date.now())
            else failedRequests++
          }
          return backAt.size
        },
        { timeout: 60_000, interval: 50 },
      )
      .toBe(orphans.length)
    for (const id of ids) expect(await position(id)).toBe(200)
    const relinked = await holders(orphans)
    for (const id of orphans) expect(relinked.get(id)).not.toBe(victimId)
    const sawRelinks = (stream: SseClient) => orphans.every((id) => stream.of('device', (d) => d.device_id === id && d.registered === true).length > 0)
    await expect.poll(() => streams.some(sawRelinks), { timeout: 15_000 }).toBe(true)
    for (const stream of streams) stream.close()

    const windowMs = Math.max(...backAt.values()) - killedAt
    // Writes go on through the surviving instances too.
    const ackedBefore = acked.length
    await expect.poll(() => acked.length, { timeout: 30_000 }).toBeGreaterThan(ackedBefore + 20)
    writing = false
    await writer

    // Every acknowledged write is there.
    const res = await fetch(`${cluster.url}/api/admin/device/${platformId}/telemetry?keys=seq&from=${base}&to=${base + 1000}&limit=1000`, { headers: { 'x-console-token': CONSOLE_TOKEN } })
    const stored = new Set(((await res.json()) as { series: { seq?: [number, number][] } }).series.seq?.map(([, v]) => v))
    const lost = acked.filter((seq) => !stored.has(seq))
    console.log(
      `nginx cluster: SIGKILL of ${victimId} (${orphans.length} of ${ids.length} machines): every machine answering again after ${windowMs} ms ` +
        `(per machine: ${orphans.map((id) => `${id} ${backAt.get(id)! - killedAt} ms`).join(', ')}); ${failedRequests} requests failed meanwhile; ` +
        `telemetry: ${acked.length} acknowledged, ${writeFailures} refused, ${lost.length} lost`,
    )
    expect(lost).toEqual([])
  })
})
