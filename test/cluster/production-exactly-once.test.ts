import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LocalCluster } from '../../src/cluster/local-cluster.js'
import { RawDevice, uniqueDeviceId } from '../gateway/helpers/raw-device.js'
import { clusterRunnable, startTestCluster } from '../helpers/test-cluster.js'

/**
 * Contract §16: "Ingest across instances stores each event once." Machines send production
 * events to three instances and re-link to another one at random while frames are unacknowledged,
 * then resend everything not acknowledged (as the SDK does), and now and then a frame that was.
 * Whatever the instance, the order or the timing: stored = sent, no duplicate, no gap, and the
 * hourly figures count each event once.
 */
const MACHINES = 6
const EVENTS_PER_MACHINE = 400
const FRAME = 20

interface SentEvent {
  id: string
  ts: number
  kind: 'placements'
  placed: number
  missed: number
}

/** A small deterministic generator, so a failure can be replayed. */
function random(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0
    return state / 2 ** 32
  }
}

const runnable = await clusterRunnable('the production exactly-once test')

describe.skipIf(!runnable)('production events across three instances (§16, §13)', () => {
  let cluster: LocalCluster
  let token: string

  beforeAll(async () => {
    ;({ cluster, token } = await startTestCluster(3, { PLATFORM_CONSOLE_TOKEN: 'production-token' }))
  }, 120_000)
  afterAll(async () => {
    await cluster?.stop()
  }, 60_000)

  it('stores every event once while machines re-link at random to other instances and resend', { timeout: 120_000 }, async () => {
    const now = Math.floor(Date.now() / 1000)
    const linkUrl = (i: number) => `${cluster.instances[i % cluster.instances.length]!.url.replace('http', 'ws')}/api/v1/device-link`
    let relinks = 0
    let resentAcked = 0

    async function runMachine(index: number): Promise<{ deviceId: string; events: SentEvent[] }> {
      const next = random(1000 + index)
      const deviceId = uniqueDeviceId('exactly-once')
      // Out of order and late: up to 2 hours back, all within the raw events' window.
      const events: SentEvent[] = Array.from({ length: EVENTS_PER_MACHINE }, (_, n) => ({
        id: `ev-${n}`,
        ts: now - 7200 + Math.floor(next() * 7000) + Math.round(next() * 1000) / 1000,
        kind: 'placements',
        placed: 1 + Math.floor(next() * 50),
        missed: Math.floor(next() * 3),
      }))
      const acked = new Set<string>()
      const collectAcks = (from: RawDevice) => {
        for (const frame of from.received)
          if (frame.type === 'production-ack') {
            expect(frame.rejected).toEqual([])
            for (const id of frame.ids as string[]) acked.add(id)
          }
      }
      let device = await RawDevice.link(linkUrl(index), { device_id: deviceId })
      while (acked.size < events.length) {
        const unacked = events.filter((e) => !acked.has(e.id))
        const frames: SentEvent[][] = []
        for (let i = 0; i < unacked.length; i += FRAME) frames.push(unacked.slice(i, i + FRAME))
        // Now and then one frame repeats events already acknowledged: acknowledged again, stored once.
        if (acked.size > 0 && next() < 0.7) {
          frames.push(events.filter((e) => acked.has(e.id)).slice(0, FRAME))
          resentAcked++
        }
        const relinkAfter = next() < 0.6 ? Math.floor(next() * frames.length) : -1
        const answers: Promise<Record<string, unknown>>[] = []
        for (const [i, frame] of frames.entries()) {
          const ids = new Set(frame.map((e) => e.id))
          answers.push(device.next((f) => f.type === 'production-ack' && Array.isArray(f.ids) && (f.ids as string[]).some((id) => ids.has(id))))
          device.send({ type: 'production', events: frame })
          if (i === relinkAfter) break
        }
        if (relinkAfter >= 0) {
          // Gone while frames were in flight: some may have been stored, some not, and no ack seen.
          // Acks that arrived before the socket closed still count, as they would for the SDK.
          device.socket.terminate()
          await device.closed
          collectAcks(device)
          relinks++
          device = await RawDevice.link(linkUrl(index + 1 + Math.floor(next() * 2)), { device_id: deviceId })
        } else {
          await Promise.all(answers)
        }
        collectAcks(device)
      }
      // Finally, acknowledged events again, on a link to another instance: acknowledged again, stored once.
      await device.close()
      device = await RawDevice.link(linkUrl(index + 2), { device_id: deviceId })
      const again = events.slice(0, FRAME)
      const ack = device.next((f) => f.type === 'production-ack')
      device.send({ type: 'production', events: again })
      expect(await ack).toMatchObject({ ids: again.map((e) => e.id), rejected: [] })
      resentAcked++
      await device.close()
      return { deviceId, events }
    }
    const machines = await Promise.all(Array.from({ length: MACHINES }, (_, i) => runMachine(i)))

    const client = new pg.Client({ connectionString: cluster.database!.url })
    await client.connect()
    try {
      for (const { deviceId, events } of machines) {
        const placed = events.reduce((sum, e) => sum + e.placed, 0)
        const missed = events.reduce((sum, e) => sum + e.missed, 0)
        const raw = await client.query<{ n: string; ids: string; placed: string; missed: string }>(
          'select count(*) as n, count(distinct event_id) as ids, sum(placed) as placed, sum(missed) as missed from production_events where device_id = $1',
          [deviceId],
        )
        expect(raw.rows[0]).toEqual({ n: String(events.length), ids: String(events.length), placed: String(placed), missed: String(missed) })
        const hourly = await client.query<{ placed: string; missed: string }>('select sum(placed) as placed, sum(missed) as missed from production_hourly where device_id = $1', [deviceId])
        expect(hourly.rows[0]).toEqual({ placed: String(placed), missed: String(missed) })
        const daily = await client.query<{ placed: string; missed: string }>('select sum(placed) as placed, sum(missed) as missed from production_daily where device_id = $1', [deviceId])
        expect(daily.rows[0]).toEqual({ placed: String(placed), missed: String(missed) })
        // And what a user reads (any instance: through the load balancer).
        const from = now - 3 * 3600
        const figures = await fetch(`${cluster.url}/api/v1/devices/${deviceId}/production?from=${from}&to=${now + 3600}`, { headers: { authorization: token } })
        expect(figures.status).toBe(200)
        expect(await figures.json()).toMatchObject({ success: true, device_id: deviceId, placed, missed })
      }
    } finally {
      await client.end()
    }
    console.log(
      `production exactly-once: ${MACHINES} machines × ${EVENTS_PER_MACHINE} events over 3 instances, ${relinks} re-links while frames were in flight, ${resentAcked} frames of acknowledged events resent: stored = sent`,
    )
    expect(relinks).toBeGreaterThan(0)
  })
})
