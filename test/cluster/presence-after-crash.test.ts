import { connect, ErrorCode } from 'nats'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { natsSubjects } from '../../src/link/bus/nats-subjects.js'
import type { LocalCluster } from '../../src/cluster/local-cluster.js'
import { SseClient } from '../events/sse-client.js'
import { RawDevice, uniqueDeviceId } from '../gateway/helpers/raw-device.js'
import { TEST_NATS_URL } from '../helpers/nats.js'
import { clusterRunnable, startTestCluster } from '../helpers/test-cluster.js'

/**
 * Resolves once the NATS server has dropped the subscriptions of the killed instance (it does so
 * when it reads the end of the dead process's socket). A request the server routes before that
 * goes to the dead connection and is lost: the caller can only time out, whatever fleetgate does.
 */
async function natsForgot(deviceId: string): Promise<void> {
  const nc = await connect({ servers: TEST_NATS_URL })
  try {
    for (let attempt = 0; attempt < 50; attempt++) {
      try {
        await nc.request(natsSubjects.request(deviceId), new Uint8Array(), { timeout: 200 })
      } catch (err) {
        if ((err as { code?: unknown }).code === ErrorCode.NoResponders) return
      }
    }
    throw new Error(`NATS still routes ${deviceId}'s requests to the killed instance`)
  } finally {
    await nc.close()
  }
}

const runnable = await clusterRunnable('the presence-after-crash test')

describe.skipIf(!runnable)('presence after SIGKILL of an instance (§13)', () => {
  let cluster: LocalCluster
  let token: string
  const devices: RawDevice[] = []

  beforeAll(async () => {
    ;({ cluster, token } = await startTestCluster(2, { PLATFORM_CONSOLE_TOKEN: 'presence-token', DEVICE_REQUEST_TIMEOUT_MS: '8000' }))
  }, 120_000)
  afterAll(async () => {
    await Promise.all(devices.map((d) => d.close()))
    await cluster?.stop()
  }, 60_000)

  it('tells the truth within 15 s on the surviving instance: device events, alive false, requests answered 502 at once', { timeout: 60_000 }, async () => {
    const [victim, survivor] = cluster.instances as [(typeof cluster.instances)[number], (typeof cluster.instances)[number]]
    const ids = [uniqueDeviceId('crash'), uniqueDeviceId('crash'), uniqueDeviceId('crash')]
    // Linked to the victim directly (not through nginx), so nothing re-links them after the crash.
    for (const id of ids) devices.push(await RawDevice.link(`${victim.url.replace('http', 'ws')}/api/v1/device-link`, { device_id: id }))
    const get = (path: string) => fetch(`${survivor.url}${path}`, { headers: { authorization: token } })
    for (const id of ids) expect(((await (await get(`/api/v1/devices/${id}`)).json()) as { device: { alive: boolean } }).device.alive).toBe(true)
    const stream = await SseClient.open(`${survivor.url}/api/v1/events`, token)

    const killedAt = Date.now()
    await cluster.kill(victim)
    await natsForgot(ids[0]!)
    // A request for one of its machines does not wait for the time-out.
    const asked = Date.now()
    const answer = await get(`/api/v1/devices/${ids[0]}/hardware/position`)
    const answeredMs = Date.now() - asked
    expect(answer.status).toBe(502)
    expect(((await answer.json()) as { error: string }).error).toBe('device_unavailable')
    expect(answeredMs).toBeLessThan(8000)

    const seenAt = new Map<string, number>()
    for (const id of ids) {
      await stream.next('device', (d) => d.device_id === id && d.alive === false)
      seenAt.set(id, Date.now() - killedAt)
    }
    for (const id of ids) {
      const device = ((await (await get(`/api/v1/devices/${id}`)).json()) as { device: { alive: boolean; registered: boolean } }).device
      expect(device).toMatchObject({ alive: false, registered: false })
    }
    stream.close()
    const slowest = Math.max(...seenAt.values())
    console.log(`presence after SIGKILL: request answered 502 in ${answeredMs} ms; device events on the survivor after ${[...seenAt.values()].join(', ')} ms (slowest ${slowest} ms, limit 15,000)`)
    expect(slowest).toBeLessThanOrEqual(15_000)
  })
})
