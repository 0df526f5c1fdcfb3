import { once } from 'node:events'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { DeviceAgent, RouteTable, type DeviceAgentOptions, type ProductionEventInput } from '@fleetgate/device-agent'
import { FakeGateway, type FakeLink } from './fake-gateway.js'

const KEY = 'device-secret-0123456789'

interface Event {
  id: string
  ts: number
  kind: string
  [field: string]: unknown
}
interface ProductionFrame {
  type: 'production'
  events: Event[]
}

const placements = (placed: number): ProductionEventInput => ({ kind: 'placements', placed, missed: 0 })

/** Contract §16: the SDK reports production events, keeps them until acknowledged and sends them again after a re-link. */
describe('device agent production reporting', () => {
  let gateway: FakeGateway
  let agent: DeviceAgent | undefined

  beforeEach(async () => {
    gateway = await FakeGateway.start()
  })
  afterEach(async () => {
    await agent?.close()
    agent = undefined
    await gateway.close()
  })

  const makeAgent = (options: Partial<DeviceAgentOptions> = {}) => {
    agent = new DeviceAgent({
      url: gateway.url,
      deviceId: 'pnp-01',
      key: KEY,
      hostname: 'pnp-01',
      version: '2.3.1',
      routes: new RouteTable(),
      backoff: { baseMs: 10, capMs: 20 },
      ...options,
    })
    return agent
  }

  /** The next link, registered. */
  const linked = async (): Promise<FakeLink> => {
    const link = await gateway.nextLink()
    await link.acceptRegistration()
    return link
  }
  const nextProduction = (link: FakeLink) => link.nextFrame<ProductionFrame & Record<string, unknown>>('production')
  const ack = (link: FakeLink, ids: string[], rejected: { id: string; error: string }[] = []) => link.send({ type: 'production-ack', ids, rejected })

  it('sends rated_cph in the register frame when configured, and none otherwise', async () => {
    makeAgent({ ratedCph: 4000 }).start()
    expect(await (await gateway.nextLink()).acceptRegistration()).toMatchObject({ type: 'register', device_id: 'pnp-01', rated_cph: 4000 })
    await agent!.close()
    makeAgent().start()
    expect(await (await gateway.nextLink()).acceptRegistration()).not.toHaveProperty('rated_cph')
    expect(() => makeAgent({ ratedCph: 0 })).toThrow(/rated_cph/)
    expect(() => makeAgent({ ratedCph: 1.5 })).toThrow(/rated_cph/)
  })

  it('gives every event an id unique for the machine, also across agent restarts, and fills ts', async () => {
    const first = makeAgent()
    const before = Date.now() / 1000
    const ids = Array.from({ length: 1000 }, (_, i) => first.production.report(placements(i)))
    const restarted = makeAgent()
    ids.push(...Array.from({ length: 1000 }, (_, i) => restarted.production.report(placements(i))))
    expect(new Set(ids).size).toBe(2000)
    for (const id of ids) expect(id).toMatch(/^.{1,64}$/)
    const explicit = restarted.production.report({ kind: 'state', state: 'standby', ts: 1_700_000_000.5 })
    restarted.start()
    const link = await linked()
    const frame = await nextProduction(link)
    expect(frame.events[0]).toEqual({ kind: 'placements', placed: 0, missed: 0, id: ids[1000], ts: expect.any(Number) })
    expect(frame.events[0]!.ts).toBeGreaterThanOrEqual(before)
    expect(frame.events[0]!.ts).toBeLessThanOrEqual(Date.now() / 1000)
    const events = [...frame.events]
    // 1000 placements, the state reported, and that state again for the new link.
    while (events.length < 1002) events.push(...(await nextProduction(link)).events)
    expect(events[1000]).toEqual({ kind: 'state', state: 'standby', ts: 1_700_000_000.5, id: explicit })
    expect(events[1001]).toMatchObject({ kind: 'state', state: 'standby' })
    expect(new Set(events.map((e) => e.id)).size).toBe(1002)
  })

  it('refuses an event without the shape of its kind, with an error naming the field', () => {
    const { production } = makeAgent()
    expect(() => production.report({ kind: 'weather' } as unknown as ProductionEventInput)).toThrow(/invalid production event: unknown kind "weather"; expected one of state, job_started/)
    expect(() => production.report({ kind: 'state', state: 'busy' } as unknown as ProductionEventInput)).toThrow(/state event: state/)
    expect(() => production.report({ kind: 'placements', placed: -1, missed: 0 })).toThrow(/placements event: placed/)
    expect(() => production.report({ kind: 'job_ended', job_id: 'j1', result: 'completed' } as unknown as ProductionEventInput)).toThrow(/boards_done/)
    expect(() => production.report({ kind: 'fault', fault: 'pickup_error', message: 'm'.repeat(257) })).toThrow(/message/)
    expect(() => production.report({ kind: 'state', state: 'productive', id: 'mine' } as unknown as ProductionEventInput)).toThrow(/id is assigned by the SDK/)
    expect(() => production.report(null as unknown as ProductionEventInput)).toThrow(/not an object/)
    expect(production.queued).toBe(0)
  })

  it('sends what accumulated in frames of at most 500 events, in order', async () => {
    const a = makeAgent()
    const ids = Array.from({ length: 1200 }, (_, i) => a.production.report(placements(i)))
    a.start()
    const link = await linked()
    const frames = [await nextProduction(link), await nextProduction(link), await nextProduction(link)]
    expect(frames.map((f) => f.events.length)).toEqual([500, 500, 200])
    expect(frames.flatMap((f) => f.events.map((e) => e.id))).toEqual(ids)
    expect(a.production.framesInFlight).toBe(3)
  })

  it('keeps at most 64 frames unacknowledged and sends the next one when an ack arrives', async () => {
    const a = makeAgent({ production: { maxQueued: 40_000 } })
    const ids = Array.from({ length: 64 * 500 + 700 }, (_, i) => a.production.report(placements(i)))
    a.start()
    const link = await linked()
    const frames: ProductionFrame[] = []
    for (let i = 0; i < 64; i++) frames.push(await nextProduction(link))
    expect(a.production.framesInFlight).toBe(64)
    ack(link, frames[0]!.events.map((e) => e.id))
    const next = await nextProduction(link)
    // The 65th frame starts where the 64th ended: nothing went out beyond 64 frames in flight.
    expect(next.events[0]!.id).toBe(ids[64 * 500])
    expect(next.events).toHaveLength(500)
    expect(a.production.acknowledged).toBe(500)
  })

  it('after a re-link sends again, in order, what was not acknowledged, and not what was', async () => {
    const a = makeAgent().start()
    let link = await linked()
    const acked = [a.production.report(placements(1)), a.production.report(placements(2))]
    const first = await nextProduction(link)
    expect(first.events.map((e) => e.id)).toEqual(acked)
    const acknowledged = once(a.production, 'acknowledged')
    ack(link, acked)
    expect((await acknowledged)[0]).toEqual(acked)
    const unacked = [a.production.report(placements(3)), a.production.report(placements(4)), a.production.report(placements(5))]
    expect((await nextProduction(link)).events.map((e) => e.id)).toEqual(unacked)
    expect(a.production.queued).toBe(3)

    link.ws.terminate()
    link = await linked()
    const resent = await nextProduction(link)
    expect(resent.events.map((e) => e.id)).toEqual(unacked)
    expect(resent.events.map((e) => e.placed)).toEqual([3, 4, 5])
    ack(link, unacked)
    await once(a.production, 'acknowledged')
    expect(a.production.queued).toBe(0)
  })

  it('bounds the queue: the oldest events are dropped first, counted and reported', async () => {
    const a = makeAgent({ production: { maxQueued: 5 } })
    const dropped: { count: number; total: number; ids: string[] }[] = []
    a.production.on('dropped', (info) => dropped.push(info))
    const ids = Array.from({ length: 8 }, (_, i) => a.production.report(placements(i)))
    expect(a.production.queued).toBe(5)
    expect(a.production.dropped).toBe(3)
    expect(dropped).toEqual([
      { count: 1, total: 1, ids: [ids[0]] },
      { count: 1, total: 2, ids: [ids[1]] },
      { count: 1, total: 3, ids: [ids[2]] },
    ])
    a.start()
    const link = await linked()
    expect((await nextProduction(link)).events.map((e) => e.id)).toEqual(ids.slice(3))
  })

  it('surfaces the events the gateway rejected and does not send them again', async () => {
    const a = makeAgent().start()
    let link = await linked()
    const good = a.production.report(placements(1))
    const late = a.production.report({ ...placements(2), ts: 1 })
    const kept = a.production.report(placements(3))
    await nextProduction(link)
    const rejected = once(a.production, 'rejected')
    ack(link, [good], [{ id: late, error: 'ts older than 30 days' }])
    const [info] = await rejected
    expect(info).toEqual({ event: { kind: 'placements', placed: 2, missed: 0, ts: 1, id: late }, error: 'ts older than 30 days' })
    expect(a.production.rejected).toBe(1)
    expect(a.production.queued).toBe(1)

    link.ws.terminate()
    link = await linked()
    expect((await nextProduction(link)).events.map((e) => e.id)).toEqual([kept])
  })

  it('reports the last state again after each re-link, with a new id and ts of the new link', async () => {
    const a = makeAgent().start()
    let link = await linked()
    const stateId = a.production.report({ kind: 'state', state: 'unscheduled_down', reason: 'parts_exhausted', ts: Date.now() / 1000 - 60 })
    a.production.report(placements(7))
    const sent = await nextProduction(link)
    ack(link, sent.events.map((e) => e.id))
    await once(a.production, 'acknowledged')

    const relinkedAt = Date.now() / 1000
    link.ws.terminate()
    link = await linked()
    const again = await nextProduction(link)
    expect(again.events).toHaveLength(1)
    expect(again.events[0]).toMatchObject({ kind: 'state', state: 'unscheduled_down', reason: 'parts_exhausted' })
    expect(again.events[0]!.id).not.toBe(stateId)
    expect(again.events[0]!.ts).toBeGreaterThanOrEqual(relinkedAt)
  })

  it('stops sending production frames to a gateway that refuses them, keeps them, and tries again after its restart', async () => {
    const a = makeAgent().start()
    let link = await linked()
    const unsupported = once(a.production, 'unsupported')
    const id = a.production.report(placements(1))
    await nextProduction(link)
    link.ws.close(4400, 'unknown frame type "production"')
    expect((await unsupported)[0]).toEqual({ code: 4400, reason: 'unknown frame type "production"' })

    link = await linked()
    await link.nextFrame('heartbeat')
    a.production.report(placements(2))
    link.ws.close(1012, 'restarting')
    await link.closed
    expect(link.received.filter((f) => f.type === 'production')).toEqual([])

    link = await linked()
    expect((await nextProduction(link)).events.map((e) => e.placed)).toEqual([1, 2])
    expect(a.production.queued).toBe(2)
    expect(id).toBeTypeOf('string')
  })
})
