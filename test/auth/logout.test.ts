import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { CompiledQuery } from 'kysely'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { DIALECTS, testDatabase } from '../helpers/dialects.js'
import { natsSuitesRunnable, TEST_CLUSTER_ENV, TEST_NATS_URL } from '../helpers/nats.js'
import { startTestApp, type TestApp } from '../helpers/test-app.js'

const post = (t: TestApp, url: string, token?: string, payload?: object) =>
  t.app.inject({ method: 'POST', url: `/api/v1/auth/${url}`, ...(token ? { headers: { authorization: `Bearer ${token}` } } : {}), ...(payload ? { payload } : {}) })
const devices = (t: TestApp, token: string) => t.app.inject({ method: 'GET', url: '/api/v1/devices', headers: { authorization: `Bearer ${token}` } })
const loginToken = async (t: TestApp, username = 'alice', password = 'alice-password') => {
  const res = await post(t, 'login', undefined, { username, password })
  expect(res.statusCode).toBe(200)
  return res.json().token as string
}

const natsRunnable = await natsSuitesRunnable({ needsPostgres: true })

/** The supported deployment of several instances (contract §13): one PostgreSQL, one NATS. */
describe.skipIf(!natsRunnable)('logout across two instances sharing PostgreSQL and NATS', () => {
  let a: TestApp
  let b: TestApp
  const database = testDatabase('postgres')
  beforeAll(async () => {
    // A session found live is taken as live for an hour: only the broadcast can end it in time.
    const env = { NATS_URL: TEST_NATS_URL, ...TEST_CLUSTER_ENV }
    a = await startTestApp('postgres', env, { database, sessions: { liveForMs: 3_600_000 } })
    b = await startTestApp('postgres', env, { database, sessions: { liveForMs: 3_600_000 } })
  })
  afterAll(async () => {
    await b?.close()
    await a?.close()
    await database.cleanup()
  })

  it('ends the token and its refresh chain on every instance at once; other sessions of the user go on', async () => {
    const token = await loginToken(a)
    const other = await loginToken(b)
    // Both instances have verified (and remembered) the tokens before the logout.
    expect((await devices(b, token)).statusCode).toBe(200)
    expect((await devices(a, token)).statusCode).toBe(200)
    const refreshed = (await post(a, 'refresh', token)).json().token as string
    expect((await devices(b, refreshed)).statusCode).toBe(200)

    const out = await post(a, 'logout', token)
    expect(out.statusCode).toBe(200)
    expect(out.json()).toEqual({ success: true })

    // The logout is answered once NATS has its broadcast; B refuses the session as soon as it arrives (milliseconds).
    await expect.poll(async () => (await devices(b, token)).statusCode).toBe(401)
    for (const t of [b, a]) {
      for (const ended of [token, refreshed]) {
        expect((await devices(t, ended)).statusCode).toBe(401)
        expect((await post(t, 'refresh', ended)).statusCode).toBe(401)
      }
    }
    expect((await post(b, 'logout', refreshed)).statusCode).toBe(401)
    // Another login of the same user is another session.
    expect((await devices(a, other)).statusCode).toBe(200)
    expect((await devices(b, await loginToken(b))).statusCode).toBe(200)
  })

  it('ends a chain from a token refreshed on another instance', async () => {
    const token = await loginToken(a)
    const refreshed = (await post(b, 'refresh', token)).json().token as string
    expect((await devices(a, token)).statusCode).toBe(200)
    expect((await post(b, 'logout', refreshed)).statusCode).toBe(200)
    await expect.poll(async () => (await devices(a, token)).statusCode).toBe(401)
  })

  it('answers 401 without a token or with an invalid one', async () => {
    expect((await post(a, 'logout')).statusCode).toBe(401)
    expect((await post(a, 'logout', 'a.b.c')).statusCode).toBe(401)
  })
})

describe.each(DIALECTS)('logout on instances sharing a database without a bus, on %s', (dialect) => {
  let a: TestApp
  let b: TestApp
  let now = 0
  const dir = mkdtempSync(join(tmpdir(), 'logout-'))
  const database = testDatabase(dialect, join(dir, 'shared.db'))
  const sessions = { liveForMs: 5_000, now: () => now }
  beforeAll(async () => {
    a = await startTestApp(dialect, {}, { database, sessions })
    b = await startTestApp(dialect, {}, { database, sessions })
  })
  afterAll(async () => {
    await b.close()
    await a.close()
    await database.cleanup()
    rmSync(dir, { recursive: true, force: true })
  })

  it('ends the token at once where it was logged out, and on the other instance within the live-session cache lifetime', async () => {
    const token = await loginToken(a)
    expect((await devices(b, token)).statusCode).toBe(200)
    expect((await post(a, 'logout', token)).statusCode).toBe(200)
    expect((await devices(a, token)).statusCode).toBe(401)
    now += 5_001
    expect((await devices(b, token)).statusCode).toBe(401)
    expect((await post(b, 'refresh', token)).statusCode).toBe(401)
  })

  it('reads a live session from the database once per cache lifetime, not per request', async () => {
    const token = await loginToken(a)
    const spy = vi.spyOn(b.storage.db.getExecutor(), 'executeQuery')
    const reads = () => spy.mock.calls.filter(([query]) => /revoked_sessions/.test((query as CompiledQuery).sql)).length
    try {
      for (let i = 0; i < 20; i++) expect((await devices(b, token)).statusCode).toBe(200)
      expect(reads()).toBe(1)
      now += 5_001
      for (let i = 0; i < 20; i++) expect((await devices(b, token)).statusCode).toBe(200)
      expect(reads()).toBe(2)
    } finally {
      spy.mockRestore()
    }
  })
})

describe.each(DIALECTS)('longest session (CLOUD_JWT_MAX_SESSION_HOURS) on %s', (dialect) => {
  let t: TestApp | undefined
  afterEach(async () => {
    await t?.close()
    t = undefined
  })

  it("refreshes within the session and refuses a refresh once the session's first login is older (401)", async () => {
    const HOUR = 3_600_000
    const start = Date.now()
    let now = start
    t = await startTestApp(dialect, { CLOUD_JWT_EXPIRE_HOURS: '1', CLOUD_JWT_MAX_SESSION_HOURS: '2' }, { login: { now: () => now } })
    const app = t
    const first = await post(app, 'login', undefined, { username: 'alice', password: 'alice-password' })
    expect(first.json().expires_in).toBe(3600)

    now = start + 0.9 * HOUR
    const second = await post(app, 'refresh', first.json().token)
    expect(second.statusCode).toBe(200)
    expect(second.json().expires_in).toBe(3600)

    now = start + 1.8 * HOUR
    const third = await post(app, 'refresh', second.json().token)
    expect(third.statusCode).toBe(200)
    // No token outlives its session: this one ends with it.
    expect(Math.abs(third.json().expires_in - 0.2 * 3600)).toBeLessThanOrEqual(1)

    // 30 s past the session's end: the token is still within the allowed clock skew, but the session is over.
    now = start + 2 * HOUR + 30_000
    expect((await devices(app, third.json().token)).statusCode).toBe(200)
    const refused = await post(app, 'refresh', third.json().token)
    expect(refused.statusCode).toBe(401)
    expect(refused.json()).toMatchObject({ success: false, error: 'unauthorized' })
    // A new login starts a new session.
    const again = await post(app, 'login', undefined, { username: 'alice', password: 'alice-password' })
    expect(again.statusCode).toBe(200)
    expect((await post(app, 'refresh', again.json().token)).statusCode).toBe(200)
  })

  it('defaults to 720 hours', async () => {
    const { loadConfig } = await import('../../src/config/config.js')
    expect(loadConfig({}).jwtMaxSessionHours).toBe(720)
    expect(() => loadConfig({ CLOUD_JWT_MAX_SESSION_HOURS: '0' })).toThrow(/CLOUD_JWT_MAX_SESSION_HOURS/)
  })
})

describe('session revocations while the database cannot be reached', () => {
  it('takes a session as live unless this instance knows it ended; other errors are thrown', async () => {
    const { SessionRevocations } = await import('../../src/auth/session-revocations.js')
    const { databaseUnavailable } = await import('../../src/storage/unreachable-database.js')
    const storage = await (await import('../helpers/dialects.js')).openTestStorage('sqlite')
    try {
      const revocations = new SessionRevocations(storage.db, storage.clock)
      await revocations.revoke('ended', Date.now() + 3_600_000)
      let failure: unknown = databaseUnavailable(new Error('connect ECONNREFUSED'))
      const broken = new Proxy(storage.db, {
        get: (target, key, receiver) => (key === 'selectFrom' ? () => ({ select: () => ({ where: () => ({ execute: () => Promise.reject(failure) }) }) }) : Reflect.get(target, key, receiver)),
      })
      const offline = new SessionRevocations(broken, storage.clock)
      expect(await offline.isRevoked('live')).toBe(false)
      expect(await revocations.isRevoked('ended')).toBe(true)
      failure = new Error('no such table')
      await expect(offline.isRevoked('live')).rejects.toThrow('no such table')
    } finally {
      await storage.cleanup()
    }
  })
})
