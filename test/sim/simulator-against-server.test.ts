import { mkdtempSync, readFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { once } from 'node:events'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { withTimeout } from '../../src/lib/time.js'
import { startSimulation, type Simulation } from '../../src/sim/simulation.js'
import { DIALECTS, testDatabase, type TestDatabase } from '../helpers/dialects.js'
import { loginAs, startTestApp, type TestApp } from '../helpers/test-app.js'
import { DEVICE_ENDPOINTS } from './machine-helpers.js'

const fixture = (name: string) => readFileSync(path.join(import.meta.dirname, 'fixtures', name)).toString('base64')

/**
 * The restart test stops a whole server and builds another in this process, beside the machines:
 * on a loaded 2-core machine each step takes seconds (the new server's build held the event loop
 * for 4.5 s in one run), so the steps get a budget of their own, each named when it runs out.
 */
const RESTART_STEP_MS = 30_000

describe.each(DIALECTS)('the simulator against a real server on %s', (dialect) => {
  let t: TestApp
  let database: TestDatabase
  let sim: Simulation
  let port: number
  let admin: string
  const env = { PLATFORM_CONSOLE_TOKEN: 'test-console-token' }
  /** Where the machines' own log goes; the restart test records it in its trail. */
  let agentLog: ((line: string) => void) | undefined

  const api = async (method: string, url: string, body?: unknown) => {
    const res = await t.app.inject({
      method: method as 'GET',
      url,
      headers: { authorization: admin },
      ...(body === undefined || body === null ? {} : { payload: body as object }),
    })
    return { status: res.statusCode, body: res.json() }
  }

  beforeAll(async () => {
    database = testDatabase(dialect, dialect === 'sqlite' ? path.join(mkdtempSync(path.join(tmpdir(), 'fg-sim-')), 'fg.db') : undefined)
    t = await startTestApp(dialect, env, { database })
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    port = (t.app.server.address() as AddressInfo).port
    admin = await loginAs(t.app, 'admin', 'admin')
    sim = await startSimulation({
      url: `http://127.0.0.1:${port}`,
      devices: 2,
      platform: 2,
      consoleToken: 'test-console-token',
      keysFile: null,
      machine: { placeMsPerItem: 50, calibrationMs: 100 },
      platformIntervals: { heartbeatMs: 200, sampleMs: 100, flushMs: 300, pollMs: 200 },
      // A restart on a loaded CI machine can keep the port closed for seconds: with the SDK's
      // default (doubling up to 30 s) the machines' next attempt could fall past the time-out.
      backoff: { baseMs: 100, capMs: 1000 },
      // The machines' lines (the platform devices, pnp-iot-…, only say their requests failed).
      log: (level, message) => {
        if (!message.startsWith('pnp-iot-')) agentLog?.(`${level} ${message}`)
      },
    })
    await sim.registered()
  })
  afterAll(async () => {
    await sim?.stop()
    await t?.app.close()
    await database?.cleanup()
  })

  it('lists the simulated machines as registered and alive', async () => {
    const { body } = await api('GET', '/api/v1/devices')
    const ids = body.devices.map((d: { device_id: string }) => d.device_id)
    expect(ids).toEqual(['pnp-01', 'pnp-02'])
    expect(body.devices[0]).toMatchObject({ registered: true, alive: true, hostname: 'pnp-01' })
  })

  it('answers every forwarded endpoint with a 2xx through the gateway', async () => {
    // The task the list starts must still be running when the list stops it, however loaded the machine is.
    expect((await api('PUT', '/api/v1/devices/pnp-02/system/settings', { key: 'place_ms_per_item', value: 60_000 })).status).toBe(200)
    for (const [method, devicePath, body] of DEVICE_ENDPOINTS) {
      if (devicePath === '/auth/login') continue
      const res = await api(method, `/api/v1/devices/pnp-02${devicePath}`, body)
      expect({ method, devicePath, status: res.status, success: res.body.success }).toEqual({
        method,
        devicePath,
        status: expect.toSatisfy((s: number) => s >= 200 && s < 300),
        success: true,
      })
    }
  })

  it('moves the head: the reported position changes over time and reaches the target', async () => {
    const start = (await api('GET', '/api/v1/devices/pnp-01/hardware/position')).body.data
    // 50 mm at 10 mm/s: 5 s of travel, so a loaded machine still reads the head on its way.
    const move = await api('POST', '/api/v1/devices/pnp-01/hardware/move', { x: start.x + 40, y: start.y + 30, speed: 10 })
    expect(move.status).toBe(200)
    expect(move.body.data).toMatchObject({ accepted: true })
    // The simulated machine moves on its own clock: there is no event to await, only the position to read.
    const seen = new Set<number>()
    const position = async () => {
      const p = (await api('GET', '/api/v1/devices/pnp-01/hardware/position')).body.data
      seen.add(p.x)
      return p
    }
    await expect.poll(position, { timeout: 25_000 }).toMatchObject({ x: start.x + 40, y: start.y + 30 })
    expect(seen.size).toBeGreaterThan(1)
  })

  it('refuses a move outside the soft limits with 400', async () => {
    const res = await api('POST', '/api/v1/devices/pnp-01/hardware/move', { x: 10_000 })
    expect(res.status).toBe(400)
    expect(res.body.success).toBe(false)
  })

  it('runs an order as a task from start to done', async () => {
    const items = [
      { component: 'R1', x: 10, y: 10, angle: 0 },
      { component: 'R2', x: 20, y: 10, angle: 90 },
      { component: 'C1', x: 30, y: 15, angle: 180 },
    ]
    const created = await api('POST', '/api/v1/devices/pnp-01/orders', { name: 'panel-a', items, settings: {} })
    expect(created.status).toBe(201)
    const orderId = created.body.order.id
    const started = await api('POST', '/api/v1/devices/pnp-01/tasks/start', { order_id: orderId })
    expect(started.status).toBe(200)
    await expect
      .poll(async () => (await api('GET', '/api/v1/devices/pnp-01/tasks/current')).body.data.task, { timeout: 15_000 })
      .toMatchObject({ order_id: orderId, state: 'done', placed: 3, total: 3 })
  })

  it.each([
    ['kicad8-all-pos.pos', 'C1', 133.35, -81.28, 180, 'top'],
    ['jlcpcb-cpl-mm.csv', 'U1', 140, -95, 45, 'top'],
  ])('parses %s into components in mm', async (file, designator, x, y, rotation, side) => {
    const res = await api('POST', '/api/v1/devices/pnp-01/orders/parse', { filename: file, encoding: 'base64', data: fixture(file) })
    expect(res.status).toBe(200)
    const parsed = res.body.parsed
    expect(parsed.units).toBe('mm')
    expect(parsed.count).toBe(parsed.components.length)
    expect(parsed.components.find((c: { designator: string }) => c.designator === designator)).toMatchObject({ x, y, rotation, side })
  })

  it('shows the platform devices reporting heartbeats and telemetry', async () => {
    const consoleHeaders = { 'x-console-token': 'test-console-token' }
    const devices = async () => (await t.app.inject({ method: 'GET', url: '/api/admin/devices', headers: consoleHeaders })).json().devices
    const online = expect.objectContaining({ online: true })
    await expect.poll(devices, { timeout: 15_000 }).toEqual([online, online])
    const id = (await devices())[0].device_id
    const telemetryKeys = async () =>
      Object.keys((await t.app.inject({ method: 'GET', url: `/api/admin/device/${id}/detail`, headers: consoleHeaders })).json().latest_telemetry ?? {})
    await expect.poll(telemetryKeys, { timeout: 15_000 }).not.toEqual([])
  })

  it('reconnects every machine after a server restart, within the back-off', { timeout: 4 * RESTART_STEP_MS }, async (context) => {
    // Should it fail, the trail says which step did not finish, with the machines' own log.
    const started = Date.now()
    const trail: string[] = []
    const step = (what: string) => trail.push(`+${Date.now() - started} ms ${what}`)
    const bounded = <T>(what: string, promise: Promise<T>) => withTimeout(promise, RESTART_STEP_MS, `${what}: not done within ${RESTART_STEP_MS} ms`)
    context.onTestFailed(() => console.error(`restart test (${dialect}) trail:\n${trail.join('\n')}`))
    agentLog = step
    for (const m of sim.machines) {
      m.agent.on('disconnected', (e: { code: number }) => step(`${m.deviceId} disconnected (${e.code}), state ${m.agent.state}`))
      m.agent.on('stopped', (e: { reason: string }) => step(`${m.deviceId} stopped (${e.reason})`))
    }
    const reregistered = sim.machines.map((m) => once(m.agent, 'registered').then(() => step(`${m.deviceId} registered`)))
    await bounded('closing the old server', t.app.close())
    step('old server closed')
    t = await bounded('building the new server', startTestApp(dialect, env, { database }))
    step('new server built')
    await bounded('listening again', t.app.listen({ port, host: '127.0.0.1' }))
    step('listening')
    admin = await loginAs(t.app, 'admin', 'admin')
    await bounded('every machine registering again', Promise.all(reregistered))
    agentLog = undefined
    const { body } = await api('GET', '/api/v1/devices')
    expect(body.devices.map((d: { alive: boolean }) => d.alive)).toEqual([true, true])
  })
})
