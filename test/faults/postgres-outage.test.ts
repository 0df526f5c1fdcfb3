import { once } from 'node:events'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { delay } from '../../src/lib/time.js'
import { DeviceAgent, ok, RouteTable } from '@fleetgate/device-agent'
import { postgresServerProblem, startPostgresServer, type PostgresServer } from '../../src/cluster/postgres-server.js'
import { assertBuilt, startServerProcess, type ServerProcess } from '../helpers/server-process.js'
import { TEST_AUTH_USERS } from '../helpers/test-app.js'
import { isServiceUnavailable, SteadyLoad, timeline, type Outcome } from './steady-load.js'

const CONSOLE_TOKEN = 'fault-console-token'
const DEVICE = 'pnp-pg-fault'
const PLATFORM_DEVICE = 'iot-pg-fault'
/** How long PostgreSQL stays down: the one deliberate wait of the test. */
const OUTAGE_MS = 4000
/** Contract §13: every instance recovers within 5 s of the dependency's return. */
const RECOVERY_LIMIT_MS = 5000

function runnable(): boolean {
  const problem = postgresServerProblem()
  if (!problem) return true
  if (process.env.CI) throw new Error(`The PostgreSQL fault test must run in CI: ${problem}`)
  console.warn(`\n!!! Skipping the PostgreSQL outage test: ${problem} !!!\n`)
  return false
}

describe.skipIf(!runnable())('PostgreSQL outage under light steady load (one instance, a PostgreSQL of its own)', () => {
  let postgres: PostgresServer | undefined
  let server: ServerProcess | undefined
  let agent: DeviceAgent | undefined
  let dataDir: string | undefined
  let token = ''
  /** A user who is not an administrator: may reach the device through the binding made by a device login. */
  let userToken = ''

  beforeAll(async () => {
    assertBuilt()
    postgres = await startPostgresServer()
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'fleetgate-fault-'))
    server = await startServerProcess({
      DATABASE_URL: postgres.url,
      DATA_DIR: dataDir,
      CLOUD_AUTH_USERS: TEST_AUTH_USERS,
      PLATFORM_CONSOLE_TOKEN: CONSOLE_TOKEN,
    })
    const login = async (username: string, password: string) => {
      const res = await fetch(`${server!.url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username, password }) })
      return ((await res.json()) as { token: string }).token
    }
    token = await login('root', 'root-password')
    userToken = await login('alice', 'alice-password')
    const added = await fetch(`${server.url}/api/admin/device/add`, { method: 'POST', headers: { 'x-console-token': CONSOLE_TOKEN, 'content-type': 'application/json' }, body: JSON.stringify({ device_id: PLATFORM_DEVICE, model: 'probe' }) })
    expect(added.status).toBe(201)
    const routes = new RouteTable()
      .get('/hardware/position', () => ok({ x: 1, y: 2, z: 3, r: 0 }))
      .post('/auth/login', () => ok({ user: { username: 'operator', role: 'operator' } }))
    agent = new DeviceAgent({ url: server.url, deviceId: DEVICE, key: 'fault-device-key-0123456789', version: '1.0.0', routes, heartbeatSeconds: 1, log: () => undefined })
    const registered = once(agent, 'registered')
    agent.start()
    await registered
    const bound = await fetch(`${server.url}/api/v1/devices/${DEVICE}/auth/login`, {
      method: 'POST',
      headers: { authorization: `Bearer ${userToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'operator', password: 'operator-pw' }),
    })
    expect(bound.status).toBe(200)
  }, 90_000)

  afterAll(async () => {
    await agent?.close()
    if (server && server.child.exitCode === null && server.child.signalCode === null) {
      server.child.kill('SIGTERM')
      await server.exited
    }
    await postgres?.destroy()
    if (dataDir) await rm(dataDir, { recursive: true, force: true })
  }, 60_000)

  it('answers 503 service_unavailable with Retry-After (never 500) while it is down, keeps forwarding to its device, and recovers within 5 s with no acknowledged write lost, its heartbeats written again', { timeout: 80_000 }, async () => {
    const url = server!.url
    const bearer = { authorization: `Bearer ${token}` }
    const limited = () => AbortSignal.timeout(15_000)
    const base = Date.now()
    let linkedAgain = 0
    agent!.on('registered', () => linkedAgain++)

    const load = new SteadyLoad()
    // Each write is one record of two keys: two points, stored together or not at all.
    load.add('write', 150, (seq) =>
      fetch(`${url}/v1/device/${PLATFORM_DEVICE}/telemetry`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ts: base + seq, values: { seq, twin: seq } }),
        signal: limited(),
      }),
    )
    load.add('read', 400, () => fetch(`${url}/api/admin/device/${PLATFORM_DEVICE}/telemetry?keys=seq&limit=1`, { headers: { 'x-console-token': CONSOLE_TOKEN }, signal: limited() }))
    load.add('forward', 150, () => fetch(`${url}/api/v1/devices/${DEVICE}/hardware/position`, { headers: bearer, signal: limited() }))
    // A bound user's access check is answered from the binding cache, not the database.
    load.add('forward-user', 300, () => fetch(`${url}/api/v1/devices/${DEVICE}/hardware/position`, { headers: { authorization: `Bearer ${userToken}` }, signal: limited() }))
    load.add('readyz', 250, () => fetch(`${url}/readyz`, { signal: limited() }))

    let stoppingAt = 0
    let downAt = 0
    let restartingAt = 0
    let upAt = 0
    try {
      await expect.poll(() => load.of('write', (o) => o.status === 200).length, { timeout: 15_000 }).toBeGreaterThanOrEqual(5)

      stoppingAt = Date.now()
      await postgres!.stop('immediate')
      downAt = Date.now()
      await expect.poll(() => load.of('readyz', (o) => o.sentAt >= downAt && o.status === 503).length, { timeout: 5_000 }).toBeGreaterThan(0)
      await expect.poll(() => load.of('write', (o) => o.sentAt >= downAt && o.status === 503).length, { timeout: 5_000 }).toBeGreaterThan(0)
      // The deliberate outage: PostgreSQL stays down this long.
      await delay(Math.max(0, OUTAGE_MS - (Date.now() - stoppingAt)))

      restartingAt = Date.now()
      await postgres!.start()
      upAt = Date.now()
      await expect.poll(() => load.of('write', (o) => o.sentAt >= upAt && o.status === 200).length, { timeout: 15_000 }).toBeGreaterThan(0)
      await expect.poll(() => load.of('readyz', (o) => o.sentAt >= upAt && o.status === 200).length, { timeout: 15_000 }).toBeGreaterThan(0)
      // A little more steady load after the recovery.
      await expect.poll(() => load.of('write', (o) => o.sentAt >= upAt && o.status === 200).length, { timeout: 15_000 }).toBeGreaterThanOrEqual(8)
    } catch (err) {
      console.log(`PostgreSQL outage test failed; answers since 1 s before the stop (kind, sent, answered relative to the stop, status): ${timeline(load, downAt)}`)
      throw err
    } finally {
      await load.stop()
    }

    // Down: from the moment pg_ctl reported it stopped until it was asked to start again.
    const during = (o: Outcome) => o.sentAt >= downAt && o.answeredAt < restartingAt
    // Recovery: from the moment pg_ctl reported it ready (it polls: the server may answer a little earlier).
    const firstAfter = (kind: string) => Math.min(...load.of(kind, (o) => o.sentAt >= restartingAt && o.status === 200).map((o) => o.answeredAt))
    const writeRecoveryMs = Math.max(0, firstAfter('write') - upAt)
    const readyRecoveryMs = Math.max(0, firstAfter('readyz') - upAt)

    // What the database holds: every acknowledged write, each write whole or absent.
    const client = new pg.Client({ connectionString: postgres!.url })
    await client.connect()
    const stored = new Map<number, number>()
    try {
      const { rows } = await client.query<{ value: string }>(
        `select t.value from platform_telemetry t join platform_telemetry_series s on s.series_id = t.series_id where s.device_id = $1 and s.key in ('seq', 'twin')`,
        [PLATFORM_DEVICE],
      )
      for (const { value } of rows) stored.set(Number(value), (stored.get(Number(value)) ?? 0) + 1)
    } finally {
      await client.end()
    }
    const writes = load.of('write')
    const acked = writes.filter((o) => o.status === 200).map((o) => o.tag!)
    const refused = writes.filter((o) => o.status === 503).map((o) => o.tag!)
    const lost = acked.filter((seq) => stored.get(seq) !== 2)
    const halfWritten = [...stored].filter(([, points]) => points !== 2).map(([seq]) => seq)
    const storedAlthoughRefused = refused.filter((seq) => stored.has(seq))
    // A write whose COMMIT reached PostgreSQL just before it was killed may be stored although its
    // answer was lost (the server then cannot know, and says 503): only a write in flight at the kill may be.
    const inDoubt = (seq: number) => writes.some((o) => o.tag === seq && o.sentAt <= downAt && o.answeredAt >= stoppingAt)
    const forwardsDuringOutage = load.of('forward', during)

    console.log(
      `PostgreSQL outage (${OUTAGE_MS} ms, pg_ctl stop -m immediate): ` +
        `writes ${JSON.stringify(load.statuses('write'))}, reads ${JSON.stringify(load.statuses('read'))}, ` +
        `forwarded ${JSON.stringify(load.statuses('forward'))} (${forwardsDuringOutage.length} while down), for a bound user ${JSON.stringify(load.statuses('forward-user'))}, readyz ${JSON.stringify(load.statuses('readyz'))}; ` +
        `PostgreSQL took ${upAt - restartingAt} ms to start again; recovery after it was ready: writes ${writeRecoveryMs} ms, /readyz ${readyRecoveryMs} ms; ` +
        `${acked.length} writes acknowledged, ${lost.length} lost, ${halfWritten.length} half-written, ${storedAlthoughRefused.length} stored although refused; ` +
        `device re-linked ${linkedAgain} times`,
    )

    // Never a 500 (nor a dropped connection): only the answers the contract allows.
    expect(load.outcomes.filter((o) => ![200, 503].includes(o.status))).toEqual([])
    // Every 503 is the contract's: service_unavailable, its error body, Retry-After.
    expect(load.outcomes.filter((o) => o.status === 503 && !isServiceUnavailable(o))).toEqual([])
    // While down: every write and read needing the database is refused; /readyz says so.
    expect(load.of('write', during).length).toBeGreaterThanOrEqual(3)
    expect(load.of('write', during).filter((o) => o.status !== 503)).toEqual([])
    expect(load.of('read', during).filter((o) => o.status !== 503)).toEqual([])
    expect(load.of('readyz', during).filter((o) => o.status !== 503)).toEqual([])
    // Requests for the device linked to this instance need no database: all answered, the link never moved.
    expect(forwardsDuringOutage.length).toBeGreaterThanOrEqual(3)
    expect(load.of('forward').filter((o) => o.status !== 200)).toEqual([])
    expect(load.of('forward-user', during).length).toBeGreaterThanOrEqual(3)
    expect(load.of('forward-user').filter((o) => o.status !== 200)).toEqual([])
    expect(linkedAgain).toBe(0)
    // Back within 5 s of PostgreSQL's return, without a restart.
    expect(writeRecoveryMs).toBeLessThanOrEqual(RECOVERY_LIMIT_MS)
    expect(readyRecoveryMs).toBeLessThanOrEqual(RECOVERY_LIMIT_MS)
    expect(server!.child.exitCode).toBe(null)
    // No acknowledged write lost, nothing half-written.
    expect(lost).toEqual([])
    expect(halfWritten).toEqual([])
    // A refused write is not stored (§2: "nothing was stored"), unless it was in flight at the kill.
    expect(storedAlthoughRefused.filter((seq) => !inDoubt(seq))).toEqual([])

    // The status writer survived the outage: the linked device's heartbeats are written again.
    const since = Date.now() / 1000
    const heartbeats = new pg.Client({ connectionString: postgres!.url })
    await heartbeats.connect()
    try {
      await expect
        .poll(async () => Number((await heartbeats.query<{ at: number | null }>('select last_heartbeat as at from devices where device_id = $1', [DEVICE])).rows[0]?.at ?? 0), { timeout: 15_000, interval: 500 })
        .toBeGreaterThan(since)
    } finally {
      await heartbeats.end()
    }
  })
})
