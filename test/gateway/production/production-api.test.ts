import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DIALECTS } from '../../helpers/dialects.js'
import { startGatewayApp, type GatewayApp } from '../helpers/gateway-app.js'
import { bind, insertDay, insertEvent, insertHour, insertMachine, insertState, setCurrent } from './production-rows.js'

const H = 3600
const DAY = 86400

describe.each(DIALECTS)('production figures over the API (§16) on %s', (dialect) => {
  let gw: GatewayApp
  // A UTC midnight three days ago: every row below is in the past.
  const D = Math.floor(Date.now() / 1000 / DAY) * DAY - 3 * DAY
  const from = D - 2.5 * H
  const to = D + 25 * H

  beforeAll(async () => {
    gw = await startGatewayApp(dialect)
    const db = gw.storage.db
    await insertMachine(db, 'p-1', 4000, { line: 'a' })
    await insertMachine(db, 'p-2', null)
    await insertMachine(db, 'p-3', null, { line: 'a' })
    await bind(db, 'alice', 'p-1')

    // p-1: raw events in the first half hour of the window, hourly rows, one whole day, one partial hour.
    await insertState(db, 'p-1', D - 3 * H, 'productive', 'e0')
    await insertState(db, 'p-1', D - 2.25 * H, 'engineering', 'e1')
    await insertState(db, 'p-1', D - 1.5 * H, 'productive', 'e2')
    await insertState(db, 'p-1', D + 26 * H, 'offline', null)
    await setCurrent(db, 'p-1', 'offline', D + 26 * H)
    await insertEvent(db, 'p-1', D - 2.6 * H, { kind: 'placements', placed: 999, missed: 99 })
    await insertEvent(db, 'p-1', D - 2.4 * H, { kind: 'placements', placed: 500, missed: 5, feeders: [{ feeder: 'F2', placed: 500, missed: 5 }] })
    await insertEvent(db, 'p-1', D - 2.3 * H, { kind: 'fault', fault: 'vision_error' })
    await insertEvent(db, 'p-1', D - 2.2 * H, { kind: 'job_ended', job_id: 'j1', result: 'completed', boards_done: 3 })
    for (const hour of [D - 2 * H, D - H]) {
      await insertHour(db, 'p-1', hour, {
        productive: 3600,
        placed: 4000,
        missed: 40,
        feeders: [
          { feeder: 'F1', placed: 3000, missed: 10 },
          { feeder: 'F2', placed: 1000, missed: 30 },
        ],
      })
    }
    for (let h = 0; h < 24; h++) await insertHour(db, 'p-1', D + h * H, { productive: 1800, standby: 1800, placed: 1000, missed: 10, feeders: [{ feeder: 'F1', placed: 1000, missed: 10 }] })
    await insertDay(db, 'p-1', D, {
      productive: 43200,
      standby: 43200,
      placed: 24000,
      missed: 240,
      jobs_completed: 2,
      faults: { pickup_error: 3 },
      feeders: [{ feeder: 'F1', placed: 24000, missed: 240 }],
    })
    await insertHour(db, 'p-1', D + 24 * H, { unscheduled_down: 1800, faults: { parts_exhausted: 1 } })

    // p-2: productive for the last half hour, still.
    const now = Date.now() / 1000
    await insertState(db, 'p-2', now - 1800, 'productive', 'x1')
    await setCurrent(db, 'p-2', 'productive', now - 1800)

    // p-3: one hour, unrated.
    await insertHour(db, 'p-3', D - 2 * H, { productive: 3600, placed: 2000 })

    for (const [job, started, ended, result] of [
      ['j1', D - 3 * H, D - 2.2 * H, 'completed'],
      ['j2', D - H, null, null],
      ['j3', D - 2 * H, D - 1.5 * H, 'failed'],
    ] as const) {
      await db
        .insertInto('production_jobs')
        .values({ device_id: 'p-1', job_id: job, order_id: 'o1', program: 'top', started_at: started, ended_at: ended, result, boards_planned: 10, boards_done: ended ? 3 : null, placed: 100, missed: 1 })
        .execute()
    }
  })
  afterAll(async () => {
    await gw?.close()
  })

  async function get(path: string, user = 'root') {
    const res = await gw.app.inject({ method: 'GET', url: path, headers: { authorization: await gw.auth(user) } })
    return { status: res.statusCode, body: res.json() }
  }

  it('adds up raw edges, hourly rows and whole days of one machine over a window', async () => {
    const { status, body } = await get(`/api/v1/devices/p-1/production?from=${from}&to=${to}`)
    expect(status, JSON.stringify(body)).toBe(200)
    const productive = 900 + 7200 + 43200
    expect(body).toMatchObject({ success: true, device_id: 'p-1', from, to, rated_cph: 4000, placed: 32500, missed: 325, jobs_completed: 3 })
    expect(body.seconds).toEqual({ productive, standby: 43200, engineering: 900, scheduled_down: 0, unscheduled_down: 1800, non_scheduled: 0, offline: 1800 })
    expect(body.cph).toBeCloseTo(32500 / (productive / 3600), 9)
    expect(body.availability).toBeCloseTo(productive / (productive + 43200 + 900 + 1800), 12)
    expect(body.performance).toBeCloseTo(32500 / (productive / 3600) / 4000, 12)
    expect(body.quality).toBeCloseTo(32500 / 32825, 12)
    expect(body.oee).toBeCloseTo(body.availability * body.performance * body.quality, 12)
    expect(body.faults).toEqual({ vision_error: 1, pickup_error: 3, parts_exhausted: 1 })
    expect(body.feeders).toEqual([
      { feeder: 'F2', placed: 2500, missed: 65, miss_rate: 65 / 2565 },
      { feeder: 'F1', placed: 30000, missed: 260, miss_rate: 260 / 30260 },
    ])
    expect(body.nozzles).toEqual([])
  })

  it('counts the open interval of the current state up to now, and the rest of the last 24 h as offline', async () => {
    const { body } = await get('/api/v1/devices/p-2/production')
    expect(body.to - body.from).toBe(DAY)
    expect(body.seconds.productive).toBeGreaterThanOrEqual(1799)
    expect(body.seconds.productive).toBeLessThan(1900)
    expect(body.seconds.offline).toBeCloseTo(DAY - body.seconds.productive, 0)
    expect(body).toMatchObject({ placed: 0, cph: 0, availability: 1, performance: null, quality: null, oee: null, rated_cph: null })
  })

  it('answers a series in UTC-aligned buckets, the first and last cut to the window', async () => {
    const { status, body } = await get(`/api/v1/devices/p-1/production/series?from=${from}&to=${to}&bucket=day`)
    expect(status, JSON.stringify(body)).toBe(200)
    expect(body.bucket).toBe('day')
    expect(body.buckets.map((b: { start: number }) => b.start)).toEqual([D - DAY, D, D + DAY])
    expect(body.buckets.map((b: { placed: number }) => b.placed)).toEqual([8500, 24000, 0])
    expect(body.buckets[0].seconds).toMatchObject({ productive: 8100, engineering: 900, offline: 0 })
    expect(body.buckets[2].seconds).toMatchObject({ unscheduled_down: 1800, offline: 1800 })
    const hours = await get(`/api/v1/devices/p-1/production/series?from=${D - 2 * H}&to=${D}&bucket=hour`)
    expect(hours.body.buckets.map((b: { start: number; placed: number }) => [b.start, b.placed])).toEqual([
      [D - 2 * H, 4000],
      [D - H, 4000],
    ])
  })

  it.each([
    ['more than 1,000 buckets', `series?from=${D - 1001 * H}&to=${D}&bucket=hour`],
    ['an unknown bucket', 'series?bucket=week'],
    ['from not before to', `?from=${D}&to=${D}`],
    ['a window over 400 days', `?from=${D - 401 * DAY}&to=${D}`],
    ['a non-numeric from', '?from=yesterday'],
  ])('refuses %s with 400', async (_name, query) => {
    const { status, body } = await get(`/api/v1/devices/p-1/production${query.startsWith('?') ? '' : '/'}${query}`)
    expect(status).toBe(400)
    expect(body).toMatchObject({ success: false, error: 'bad_request' })
  })

  it('lists jobs newest first, a running one without end and result, page by page', async () => {
    const first = await get('/api/v1/devices/p-1/production/jobs?limit=2')
    expect(first.status).toBe(200)
    expect(first.body.jobs.map((j: { job_id: string }) => j.job_id)).toEqual(['j2', 'j3'])
    expect(first.body.jobs[0]).toEqual({ job_id: 'j2', order_id: 'o1', program: 'top', started_at: D - H, ended_at: null, result: null, boards_planned: 10, boards_done: null, placed: 100, missed: 1 })
    expect(first.body.next_after).toBe('j3')
    const second = await get('/api/v1/devices/p-1/production/jobs?limit=2&after=j3')
    expect(second.body.jobs.map((j: { job_id: string }) => j.job_id)).toEqual(['j1'])
    expect(second.body.next_after).toBeUndefined()
    expect((await get('/api/v1/devices/p-1/production/jobs?after=nope')).status).toBe(400)
  })

  it('groups the fleet by a label, machines without it under null, with the group performance over rated machines only', async () => {
    const { status, body } = await get(`/api/v1/production?from=${D - 2 * H}&to=${D - H}&group_by=label:line`)
    expect(status, JSON.stringify(body)).toBe(200)
    expect(body.groups.map((g: { key: string | null; devices: number }) => [g.key, g.devices])).toEqual([
      ['a', 2],
      [null, 1],
    ])
    const a = body.groups[0]
    expect(a).toMatchObject({ placed: 6000, missed: 40, cph: 3000, availability: 1, performance: 1 })
    expect(a.seconds.productive).toBe(7200)
    expect(body.groups[1]).toMatchObject({ key: null, placed: 0, cph: null, performance: null, oee: null })
    expect(body.groups[1].seconds.offline).toBe(3600)
    expect(body.total).toMatchObject({ devices: 3, placed: 6000 })
  })

  it('groups by machine by default, and filters by selector', async () => {
    const byDevice = await get(`/api/v1/production?from=${D - 2 * H}&to=${D - H}`)
    expect(byDevice.body.groups.map((g: { key: string }) => g.key)).toEqual(['p-1', 'p-2', 'p-3'])
    const selected = await get(`/api/v1/production?from=${D - 2 * H}&to=${D - H}&selector=${encodeURIComponent('line=a')}`)
    expect(selected.body.groups.map((g: { key: string }) => g.key)).toEqual(['p-1', 'p-3'])
    const bad = await get(`/api/v1/production?selector=${encodeURIComponent('line in (')}`)
    expect(bad.status).toBe(400)
    expect(bad.body.error).toBe('invalid_selector')
    expect((await get('/api/v1/production?group_by=label:Bad')).status).toBe(400)
    expect((await get('/api/v1/production?group_by=site')).status).toBe(400)
  })

  it('shows a user only the machines bound to them', async () => {
    const fleet = await get(`/api/v1/production?from=${D - 2 * H}&to=${D - H}`, 'alice')
    expect(fleet.body.groups.map((g: { key: string }) => g.key)).toEqual(['p-1'])
    expect(fleet.body.total.devices).toBe(1)
    expect((await get('/api/v1/devices/p-1/production', 'alice')).status).toBe(200)
    for (const path of ['', '/series', '/jobs']) {
      const hidden = await get(`/api/v1/devices/p-3/production${path}`, 'alice')
      expect(hidden.status).toBe(404)
      expect(hidden.body.error).toBe('not_found')
    }
  })
})
