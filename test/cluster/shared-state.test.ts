import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CommandQueue } from '../../src/platform/commands/command-queue.js'
import { RETENTION_LOCK } from '../../src/platform/platform-plugin.js'
import { RetentionJob } from '../../src/platform/retention/retention-job.js'
import { TelemetryStore } from '../../src/platform/telemetry/telemetry-store.js'
import { DIALECTS, TEST_POSTGRES_URL, testDatabase, type TestDatabase } from '../helpers/dialects.js'
import { startTestApp, type TestApp } from '../helpers/test-app.js'

const DAY = 86_400_000
const CONSOLE = { 'x-console-token': 'test-console-token' }

describe.each(DIALECTS)('instance id on %s', (dialect) => {
  it('/readyz reports INSTANCE_ID when set, else a generated hostname-pid-random id', async () => {
    const named = await startTestApp(dialect, { INSTANCE_ID: 'gw-a.1' })
    const generated = await startTestApp(dialect)
    try {
      expect((await named.app.inject({ method: 'GET', url: '/readyz' })).json()).toEqual({ success: true, status: 'ready', instance: 'gw-a.1' })
      const id = (await generated.app.inject({ method: 'GET', url: '/readyz' })).json().instance
      expect(id).toMatch(new RegExp(`^[A-Za-z0-9._:-]+-${process.pid}-[0-9a-f]{6}$`))
    } finally {
      await named.close()
      await generated.close()
    }
  })
})

describe.skipIf(!DIALECTS.includes('postgres'))('two instances on one PostgreSQL database', () => {
  let database: TestDatabase
  let a: TestApp
  let b: TestApp
  beforeAll(async () => {
    database = testDatabase('postgres')
    a = await startTestApp('postgres', { INSTANCE_ID: 'a' }, { database })
    b = await startTestApp('postgres', { INSTANCE_ID: 'b' }, { database })
  })
  afterAll(async () => {
    await a?.close()
    await b?.close()
    await database?.cleanup()
  })

  it('counts bind-verify tries of one client address on both instances together: the 11th gets 429', async () => {
    const remoteAddress = '198.51.100.77'
    const verify = (gw: TestApp) => gw.app.inject({ method: 'POST', url: '/v1/bind/verify', payload: { code: '000000', user_id: 'alice' }, headers: CONSOLE, remoteAddress })
    for (let i = 0; i < 10; i++) expect((await verify(i % 2 ? b : a)).statusCode).toBe(400)
    for (const gw of [a, b]) {
      const limited = await verify(gw)
      expect(limited.statusCode).toBe(429)
      expect(limited.json()).toMatchObject({ success: false, error: 'rate_limited' })
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0)
    }
  })

  it('lets at most 10 of 30 concurrent bind-verify tries through across both instances', async () => {
    const remoteAddress = '198.51.100.78'
    const tries = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        (i % 2 ? b : a).app.inject({ method: 'POST', url: '/v1/bind/verify', payload: { code: '000000', user_id: 'alice' }, headers: CONSOLE, remoteAddress }),
      ),
    )
    const statuses = tries.map((r) => r.statusCode)
    expect(statuses.filter((s) => s === 400).length).toBeLessThanOrEqual(10)
    expect(statuses.filter((s) => s !== 400).every((s) => s === 429)).toBe(true)
  })

  it('runs the retention job on one instance at a time (advisory lock)', async () => {
    const db = a.storage.db
    await a.app.inject({ method: 'POST', url: '/api/admin/device/add', payload: { device_id: 'ret-lock', model: 'bot' }, headers: CONSOLE })
    const now = Date.now()
    await new TelemetryStore(a.storage).insert('ret-lock', [{ ts: now - 40 * DAY, values: { t: 1 } }])
    const jobOn = (gw: TestApp) =>
      new RetentionJob(
        {
          db: gw.storage.db,
          telemetry: new TelemetryStore(gw.storage),
          commands: new CommandQueue(gw.storage, { ackTimeoutMs: 60_000, maxAttempts: 5, ttlMs: DAY }),
          telemetryRetentionDays: 30,
          logRetentionDays: 30,
          exclusive: (fn) => gw.storage.exclusive(RETENTION_LOCK, fn),
        },
        gw.app.log,
      )
    // Instance A is in the middle of a pass: B's pass is skipped and prunes nothing.
    let releaseA!: () => void
    let aStarted!: () => void
    const started = new Promise<void>((resolve) => (aStarted = resolve))
    const aRun = a.storage.exclusive(RETENTION_LOCK, async () => {
      aStarted()
      await new Promise<void>((resolve) => (releaseA = resolve))
      return 'a ran'
    })
    await started
    expect(await jobOn(b).runExclusive(now)).toBeUndefined()
    releaseA()
    expect(await aRun).toBe('a ran')
    // Free again: B's pass runs, and finds the old point still there.
    expect(await jobOn(b).runExclusive(now)).toMatchObject({ telemetry: 1 })
  })

  it("polls commands on B while A's poll transaction holds the oldest command (SKIP LOCKED), each command handed out once", async () => {
    await a.app.inject({ method: 'POST', url: '/api/admin/device/add', payload: { device_id: 'poll-lock', model: 'bot' }, headers: CONSOLE })
    const ids: number[] = []
    for (let i = 0; i < 3; i++) {
      const res = await a.app.inject({ method: 'POST', url: '/api/admin/device/poll-lock/command', payload: { action: 'ping', params: {} }, headers: CONSOLE })
      ids.push(res.json().command.id)
    }
    // A poll still inside its transaction on another connection, holding the first command's row.
    const holder = new pg.Client({ connectionString: TEST_POSTGRES_URL, options: `-c search_path=${(database.target as { schema: string }).schema}` })
    await holder.connect()
    try {
      await holder.query('begin')
      await holder.query('select id from platform_commands where id = $1 for update', [ids[0]])
      const res = await b.app.inject({ method: 'GET', url: '/v1/device/poll-lock/commands?limit=10' })
      expect(res.statusCode).toBe(200)
      expect(res.json().commands.map((c: { id: number }) => c.id)).toEqual([ids[1], ids[2]])
      await holder.query('commit')
    } finally {
      await holder.end()
    }
    const after = await a.app.inject({ method: 'GET', url: '/v1/device/poll-lock/commands?limit=10' })
    expect(after.json().commands.map((c: { id: number }) => c.id)).toEqual([ids[0]])
  })
})
