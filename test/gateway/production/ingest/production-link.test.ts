import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { InProcessEventBus } from '../../../../src/events/in-process-event-bus.js'
import type { FleetEvent } from '../../../../src/fleet-event.js'
import { DIALECTS, testDatabase } from '../../../helpers/dialects.js'
import { startGatewayApp, type GatewayApp } from '../../helpers/gateway-app.js'
import { machine } from '../../helpers/machine.js'
import { RawDevice, uniqueDeviceId } from '../../helpers/raw-device.js'

type Event = { id: string } & Record<string, unknown>
type MachineState = { device_id: string; state: string; reason: string | null; at: number }

describe.each(DIALECTS)('production reporting on the device link (§16) on %s', (dialect) => {
  let gw: GatewayApp
  const bus = new InProcessEventBus<FleetEvent>()
  const states: MachineState[] = []
  const waiters: { match: (e: MachineState) => boolean; resolve: (e: MachineState) => void }[] = []
  const links: RawDevice[] = []
  /** An hour-aligned time five hours ago: well inside the accepted window. */
  const H = Math.floor(Date.now() / 1000 / 3600) * 3600 - 5 * 3600

  beforeAll(async () => {
    bus.subscribe((event) => {
      if (event.kind !== 'machine-state') return
      states.push(event.data)
      for (const w of waiters.splice(0)) if (w.match(event.data)) w.resolve(event.data)
      else waiters.push(w)
    })
    gw = await startGatewayApp(dialect, {}, { eventBus: bus })
  })
  afterAll(async () => {
    for (const link of links) await link.close().catch(() => undefined)
    await gw.close()
  })

  const link = async (id: string, fields: Record<string, unknown> = {}, url = gw.linkUrl) => {
    const device = await RawDevice.link(url, { device_id: id, ...fields }, machine)
    links.push(device)
    return device
  }
  const nextState = (match: (e: MachineState) => boolean) => new Promise<MachineState>((resolve) => waiters.push({ match, resolve }))
  const report = async (device: RawDevice, events: Event[] | unknown) => {
    const ack = device.next((f) => f.type === 'production-ack')
    device.send({ type: 'production', events })
    return (await ack) as { ids: string[]; rejected: { id: string; error: string }[] }
  }
  const asRoot = async (url: string) => gw.app.inject({ method: 'GET', url, headers: { authorization: await gw.auth('root') } })
  const count = async (deviceId: string) =>
    Number((await gw.storage.db.selectFrom('production_events').select((eb) => eb.fn.countAll().as('n')).where('device_id', '=', deviceId).executeTakeFirstOrThrow()).n)

  it('acknowledges stored events by id, rejected ones with a reason, and a resent id again without storing it twice', async () => {
    const id = uniqueDeviceId('pr')
    const device = await link(id)
    const events: Event[] = [
      { id: 'e1', ts: H + 10, kind: 'placements', placed: 40, missed: 1 },
      { id: 'e2', ts: H + 20, kind: 'fault', fault: 'other' },
      { id: 'e3', ts: H + 30, kind: 'state', state: 'warp_speed' },
    ]
    const first = await report(device, events)
    expect(first.ids).toEqual(['e1', 'e2'])
    expect(first.rejected).toEqual([{ id: 'e3', error: expect.stringMatching(/state/) }])
    expect(await report(device, events.slice(0, 2))).toEqual({ type: 'production-ack', ids: ['e1', 'e2'], rejected: [] })
    expect(await count(id)).toBe(2)
    const hour = await gw.storage.db.selectFrom('production_hourly').select(['placed', 'missed']).where('device_id', '=', id).execute()
    expect(hour).toEqual([{ placed: 40, missed: 1 }])
    // Production frames count as received messages, acknowledgements as sent ones.
    const record = (await asRoot(`/api/v1/devices/${id}`)).json().device
    expect(record.messages_received).toBeGreaterThanOrEqual(2)
    expect(record.messages_sent).toBeGreaterThanOrEqual(2)
  })

  it('closes the link with 4400 on every malformed frame, storing nothing', async () => {
    const malformed: [string, unknown][] = [
      ['no events', { type: 'production' }],
      ['events not an array', { type: 'production', events: { id: 'x' } }],
      ['no event', { type: 'production', events: [] }],
      ['501 events', { type: 'production', events: Array.from({ length: 501 }, (_, i) => ({ id: `m${i}`, ts: H, kind: 'fault', fault: 'other' })) }],
      ['an event not an object', { type: 'production', events: ['e1'] }],
      ['an event an array', { type: 'production', events: [[{ id: 'e1' }]] }],
      ['an event without id', { type: 'production', events: [{ ts: H, kind: 'fault', fault: 'other' }] }],
      ['an empty id', { type: 'production', events: [{ id: '', ts: H, kind: 'fault', fault: 'other' }] }],
      ['an id of 65 characters', { type: 'production', events: [{ id: 'i'.repeat(65), ts: H, kind: 'fault', fault: 'other' }] }],
      ['a numeric id', { type: 'production', events: [{ id: 7, ts: H, kind: 'fault', fault: 'other' }] }],
      ['a null event', { type: 'production', events: [null] }],
    ]
    for (const [what, frame] of malformed) {
      const id = uniqueDeviceId('pm')
      const device = await link(id)
      device.send(frame)
      expect((await device.closed).code, what).toBe(4400)
      expect(await count(id), what).toBe(0)
    }
    // 500 events is the most a frame may carry.
    const id = uniqueDeviceId('pm')
    const device = await link(id)
    const ack = await report(device, Array.from({ length: 500 }, (_, i) => ({ id: `m${i}`, ts: H + i, kind: 'fault', fault: 'other' })))
    expect(ack.ids).toHaveLength(500)
  })

  it('raises machine-state when the current state changes, not for a late event, and offline when the link closes', async () => {
    const id = uniqueDeviceId('ps')
    const device = await link(id)
    const productive = nextState((e) => e.device_id === id)
    await report(device, [{ id: 's1', ts: H + 100, kind: 'state', state: 'productive' }])
    expect(await productive).toEqual({ device_id: id, state: 'productive', reason: null, at: H + 100 })
    // Late (before s1): the current state does not change, so nothing is raised; the next event is the one for s3.
    const down = nextState((e) => e.device_id === id)
    await report(device, [{ id: 's0', ts: H + 50, kind: 'state', state: 'standby' }])
    await report(device, [{ id: 's3', ts: H + 300, kind: 'state', state: 'unscheduled_down', reason: 'parts_exhausted' }])
    expect(await down).toEqual({ device_id: id, state: 'unscheduled_down', reason: 'parts_exhausted', at: H + 300 })
    const offline = nextState((e) => e.device_id === id)
    const closedAt = Date.now() / 1000
    await device.close()
    const event = await offline
    expect(event).toMatchObject({ device_id: id, state: 'offline', reason: null })
    expect(Math.abs(event.at - closedAt)).toBeLessThan(30)
    expect(states.filter((e) => e.device_id === id).map((e) => e.state)).toEqual(['productive', 'unscheduled_down', 'offline'])
    const current = await gw.storage.db.selectFrom('production_current').selectAll().where('device_id', '=', id).executeTakeFirstOrThrow()
    expect(current).toMatchObject({ state: 'offline', since: event.at })
    const row = await gw.storage.db.selectFrom('production_states').selectAll().where('device_id', '=', id).where('state', '=', 'offline').executeTakeFirstOrThrow()
    expect(row).toMatchObject({ event_id: null, ts: event.at })
  })

  it('keeps rated_cph from the latest register frame on the machine record; a bad one is refused with 4400', async () => {
    const id = uniqueDeviceId('pc')
    await (await link(id, { rated_cph: 42_000 })).close()
    expect((await asRoot(`/api/v1/devices/${id}`)).json().device.rated_cph).toBe(42_000)
    const list = (await asRoot(`/api/v1/devices?prefix=${id}`)).json().devices
    expect(list).toEqual([expect.objectContaining({ device_id: id, rated_cph: 42_000 })])
    await (await link(id)).close()
    expect((await asRoot(`/api/v1/devices/${id}`)).json().device.rated_cph).toBeNull()
    for (const bad of [0, 1.5, 1_000_001, '4000']) {
      const device = await RawDevice.open(gw.linkUrl)
      device.send({ type: 'register', device_id: id, key: 'device-key-0123456789abcdef', hostname: id, version: '1', rated_cph: bad })
      expect((await device.closed).code, String(bad)).toBe(4400)
    }
  })
})

describe.runIf(DIALECTS.includes('postgres'))('production events across two instances sharing one PostgreSQL', () => {
  it('stores an event resent to the other instance once, acknowledges it on both, counts it once', async () => {
    const database = testDatabase('postgres')
    const a = await startGatewayApp('postgres', {}, { database })
    const b = await startGatewayApp('postgres', {}, { database })
    const links: RawDevice[] = []
    try {
      const id = uniqueDeviceId('px')
      const H = Math.floor(Date.now() / 1000 / 3600) * 3600 - 3600
      const events = Array.from({ length: 50 }, (_, i) => ({ id: `x${i}`, ts: H + i * 10, kind: i % 10 === 0 ? 'state' : 'placements', ...(i % 10 === 0 ? { state: i % 20 === 0 ? 'productive' : 'standby' } : { placed: 10, missed: 1 }) }))
      const send = async (device: RawDevice) => {
        const ack = device.next((f) => f.type === 'production-ack')
        device.send({ type: 'production', events })
        return (await ack) as { ids: string[] }
      }
      const onA = await RawDevice.link(a.linkUrl, { device_id: id }, machine)
      links.push(onA)
      expect((await send(onA)).ids).toHaveLength(50)
      // The machine re-links to the other instance and resends what it holds (concurrent stores of one machine: see production-store.test.ts).
      const onB = await RawDevice.link(b.linkUrl, { device_id: id }, machine)
      links.push(onB)
      expect((await send(onB)).ids).toHaveLength(50)
      expect((await send(onB)).ids).toHaveLength(50)
      const stored = await a.storage.db.selectFrom('production_events').select((eb) => eb.fn.countAll().as('n')).where('device_id', '=', id).executeTakeFirstOrThrow()
      expect(Number(stored.n)).toBe(50)
      const hours = await b.storage.db.selectFrom('production_hourly').select(['placed', 'missed', 's_productive', 's_standby']).where('device_id', '=', id).execute()
      expect(hours.reduce((s, h) => s + h.placed, 0)).toBe(450)
      expect(hours.reduce((s, h) => s + h.missed, 0)).toBe(45)
      // States at 0, 100, …, 400 s alternate productive/standby: four closed intervals of 100 s.
      expect(hours.reduce((s, h) => s + h.s_productive + h.s_standby, 0)).toBeCloseTo(400, 6)
    } finally {
      for (const link of links) await link.close().catch(() => undefined)
      await a.close()
      await b.close()
      await database.cleanup()
    }
  })
})
