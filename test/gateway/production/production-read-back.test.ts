import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ProductionStore } from '../../../src/gateway/production/ingest/production-store.js'
import { DIALECTS } from '../../helpers/dialects.js'
import { startGatewayApp, type GatewayApp } from '../helpers/gateway-app.js'
import { insertMachine } from './production-rows.js'

const STATES = ['productive', 'standby', 'engineering', 'scheduled_down', 'unscheduled_down', 'non_scheduled'] as const
const H = 3600
const DAY = 86400
/** Windows as offsets from the first event: within an hour, across hours, across a whole UTC day, from before the first event. */
const WINDOWS: [string, number, number][] = [
  ['within one hour', 2 * H + 100.25, 2 * H + 1900.5],
  ['across hours, no whole day', 1000.5, DAY + 5000.25],
  ['across a whole UTC day', -3000, 2 * DAY - 10],
  ['from before the first event', -DAY, DAY],
]

/**
 * What the ingest side stores (through its own store: raw events, state sequence, rollups) read
 * back over the API equals the figures computed straight from the events, whatever part of a
 * window comes from daily rows, hourly rows or raw events.
 */
describe.each(DIALECTS)('production figures read back from what was ingested (§16) on %s', (dialect) => {
  let gw: GatewayApp
  const base = Math.floor(Date.now() / 1000 / H) * H - 3 * DAY + 1234.5
  const states: { ts: number; state: string }[] = []
  const placements: { ts: number; placed: number; missed: number }[] = []

  beforeAll(async () => {
    gw = await startGatewayApp(dialect)
    await insertMachine(gw.storage.db, 'rb-1', 3000)
    const store = new ProductionStore(gw.storage)
    const events: Record<string, unknown>[] = []
    // Two days of state changes every 37 minutes, placements every 13 minutes; deterministic.
    for (let i = 0, ts = base; ts < base + 2 * DAY; i++, ts += 37 * 60 + (i % 5) * 11.25) {
      const state = STATES[(i * 7) % STATES.length]!
      states.push({ ts, state })
      events.push({ id: `s-${i}`, ts, kind: 'state', state })
    }
    for (let i = 0, ts = base + 60; ts < base + 2 * DAY; i++, ts += 13 * 60 + (i % 3) * 7) {
      const p = { ts, placed: 300 + (i % 11) * 10, missed: i % 4 }
      placements.push(p)
      events.push({ id: `p-${i}`, ts, kind: 'placements', placed: p.placed, missed: p.missed, feeders: [{ feeder: `F${i % 3}`, placed: p.placed, missed: p.missed }] })
    }
    for (let i = 0; i < events.length; i += 400) {
      const stored = await store.storeFrame('rb-1', events.slice(i, i + 400) as never)
      expect(stored.rejected).toEqual([])
    }
  })
  afterAll(async () => {
    await gw?.close()
  })

  /** The figures straight from the events, over [from, to) with `to` before now (the last state's open interval is cut at `to`). */
  function reference(from: number, to: number) {
    const seconds: Record<string, number> = Object.fromEntries(STATES.map((s) => [s, 0]))
    for (let i = 0; i < states.length; i++) {
      const start = states[i]!.ts
      const end = i + 1 < states.length ? states[i + 1]!.ts : Infinity
      seconds[states[i]!.state]! += Math.max(0, Math.min(end, to) - Math.max(start, from))
    }
    const inside = placements.filter((p) => p.ts >= from && p.ts < to)
    return { seconds, placed: inside.reduce((n, p) => n + p.placed, 0), missed: inside.reduce((n, p) => n + p.missed, 0) }
  }

  async function figures(from: number, to: number) {
    const res = await gw.app.inject({ method: 'GET', url: `/api/v1/devices/rb-1/production?from=${from}&to=${to}`, headers: { authorization: await gw.auth('root') } })
    expect(res.statusCode, res.body).toBe(200)
    return res.json()
  }

  it.each(WINDOWS)('%s', async (_name, fromOffset, toOffset) => {
    const from = base + fromOffset
    const to = base + toOffset
    const expected = reference(from, to)
    const body = await figures(from, to)
    for (const state of STATES) expect(body.seconds[state], state).toBeCloseTo(expected.seconds[state]!, 3)
    const known = STATES.reduce((n, s) => n + expected.seconds[s]!, 0)
    expect(body.seconds.offline).toBeCloseTo(to - from - known, 3)
    expect(body.placed).toBe(expected.placed)
    expect(body.missed).toBe(expected.missed)
    expect(body.feeders.reduce((n: number, f: { placed: number }) => n + f.placed, 0)).toBe(expected.placed)
  })

  it.each(WINDOWS)('the fleet query adds up the same figures %s, by machine and by label', async (_name, fromOffset, toOffset) => {
    const from = base + fromOffset
    const to = base + toOffset
    const expected = reference(from, to)
    const known = STATES.reduce((n, s) => n + expected.seconds[s]!, 0)
    for (const groupBy of ['device', 'label:line']) {
      const res = await gw.app.inject({ method: 'GET', url: `/api/v1/production?from=${from}&to=${to}&group_by=${groupBy}`, headers: { authorization: await gw.auth('root') } })
      expect(res.statusCode, res.body).toBe(200)
      const { groups, total } = res.json() as { groups: { key: string | null; devices: number; placed: number; missed: number; seconds: Record<string, number> }[]; total: { devices: number } }
      expect(groups).toHaveLength(1)
      const [group] = groups
      expect(group!.key).toBe(groupBy === 'device' ? 'rb-1' : null)
      expect(group!.devices).toBe(1)
      expect(total.devices).toBe(1)
      for (const state of STATES) expect(group!.seconds[state], `${groupBy} ${state}`).toBeCloseTo(expected.seconds[state]!, 3)
      expect(group!.seconds.offline).toBeCloseTo(to - from - known, 3)
      expect(group!.placed).toBe(expected.placed)
      expect(group!.missed).toBe(expected.missed)
    }
  })

  it('adds the last state’s open interval up to now', async () => {
    const from = base + 2 * DAY - 2 * H
    const before = Date.now() / 1000
    const body = await figures(from, before + DAY)
    const after = Date.now() / 1000
    const last = states.at(-1)!
    const lower = reference(from, before).seconds[last.state]!
    const upper = reference(from, after).seconds[last.state]!
    expect(body.seconds[last.state]).toBeGreaterThanOrEqual(lower - 1e-3)
    expect(body.seconds[last.state]).toBeLessThanOrEqual(upper + 1e-3)
    // The fleet query adds the same open interval.
    const fleet = await gw.app.inject({ method: 'GET', url: `/api/v1/production?from=${from}&to=${before + DAY}`, headers: { authorization: await gw.auth('root') } })
    const [group] = fleet.json().groups as { seconds: Record<string, number> }[]
    expect(group!.seconds[last.state]).toBeGreaterThanOrEqual(lower - 1e-3)
    expect(group!.seconds[last.state]).toBeLessThanOrEqual(reference(from, Date.now() / 1000).seconds[last.state]! + 1e-3)
  })

  it('splits the same figures into day buckets', async () => {
    const from = base - 3000
    const to = base + 2 * DAY - 10
    const res = await gw.app.inject({ method: 'GET', url: `/api/v1/devices/rb-1/production/series?from=${from}&to=${to}&bucket=day`, headers: { authorization: await gw.auth('root') } })
    const buckets = res.json().buckets as { start: number; placed: number; seconds: Record<string, number> }[]
    for (const b of buckets) {
      const expected = reference(Math.max(from, b.start), Math.min(to, b.start + DAY))
      expect(b.placed).toBe(expected.placed)
      for (const state of STATES) expect(b.seconds[state], `${b.start} ${state}`).toBeCloseTo(expected.seconds[state]!, 3)
    }
    expect(buckets.reduce((n, b) => n + b.placed, 0)).toBe(reference(from, to).placed)
  })
})

/**
 * A window that reaches now reads the hour under way from its hourly row, less what lies after
 * now: machines may report up to 5 minutes ahead. The fleet query must count neither the
 * placements nor the state time after now that the hourly row already holds.
 */
describe.each(DIALECTS)('the fleet query over the hour under way (§16) on %s', (dialect) => {
  let gw: GatewayApp
  const now = Date.now() / 1000
  const hour = Math.floor(now / H) * H
  const inside = hour + (now - hour) / 2
  const states = [
    { ts: hour - 1800, state: 'standby' },
    { ts: inside, state: 'productive' },
    { ts: now + 120, state: 'unscheduled_down' },
  ]
  const placements = [
    { ts: hour - 600, placed: 500, missed: 5 },
    { ts: inside + 0.5, placed: 300, missed: 3 },
    { ts: now + 60, placed: 77, missed: 7 },
  ]

  beforeAll(async () => {
    gw = await startGatewayApp(dialect)
    await insertMachine(gw.storage.db, 'uw-1', 3000)
    const events = [
      ...states.map((s, i) => ({ id: `s-${i}`, ts: s.ts, kind: 'state', state: s.state })),
      ...placements.map((p, i) => ({ id: `p-${i}`, ts: p.ts, kind: 'placements', placed: p.placed, missed: p.missed })),
    ]
    const stored = await new ProductionStore(gw.storage).storeFrame('uw-1', events as never)
    expect(stored.rejected).toEqual([])
  })
  afterAll(async () => {
    await gw?.close()
  })

  /** Seconds per state over [from, to) straight from the events. */
  function seconds(from: number, to: number): Record<string, number> {
    const out: Record<string, number> = Object.fromEntries(STATES.map((s) => [s, 0]))
    states.forEach((s, i) => {
      const end = states[i + 1]?.ts ?? Infinity
      out[s.state]! += Math.max(0, Math.min(end, to) - Math.max(s.ts, from))
    })
    return out
  }

  it.each([
    ['from two hours back to now', -2 * H, undefined],
    ['from the hour’s start to now', 0, undefined],
    ['from two hours back to a second after the hour’s placements, before now', -2 * H, 1],
  ])('%s', async (_name, fromOffset, endAfterInside) => {
    const from = hour + fromOffset
    const to = endAfterInside === undefined ? now + DAY : inside + endAfterInside
    const res = await gw.app.inject({ method: 'GET', url: `/api/v1/production?from=${from}&to=${to}`, headers: { authorization: await gw.auth('root') } })
    const [before, after] = endAfterInside === undefined ? [now, Date.now() / 1000] : [to, to]
    expect(res.statusCode, res.body).toBe(200)
    const [group] = res.json().groups as { key: string; placed: number; missed: number; seconds: Record<string, number> }[]
    expect(group!.key).toBe('uw-1')
    const counted = placements.filter((p) => p.ts >= from && p.ts < before)
    expect(group!.placed).toBe(counted.reduce((n, p) => n + p.placed, 0))
    expect(group!.missed).toBe(counted.reduce((n, p) => n + p.missed, 0))
    for (const state of STATES) {
      expect(group!.seconds[state], state).toBeGreaterThanOrEqual(seconds(from, before)[state]! - 1e-3)
      expect(group!.seconds[state], state).toBeLessThanOrEqual(seconds(from, after)[state]! + 1e-3)
    }
  })
})
