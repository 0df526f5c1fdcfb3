import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AddressInfo } from 'node:net'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { clientAddressKey } from '../../src/auth/client-address.js'
import { FAILURES_PER_USERNAME, LOGINS_PER_ADDRESS } from '../../src/auth/login-limits.js'
import { verifyPassword, type PasswordHash } from '../../src/auth/password-hash.js'
import { DIALECTS, testDatabase } from '../helpers/dialects.js'
import { startTestApp, type TestApp } from '../helpers/test-app.js'

const login = (t: TestApp, username: string, password: string, forwardedFor?: string) =>
  t.app.inject({
    method: 'POST',
    url: '/api/v1/auth/login',
    payload: { username, password },
    remoteAddress: '127.0.0.1',
    ...(forwardedFor ? { headers: { 'x-forwarded-for': forwardedFor } } : {}),
  })

/** A stand-in for WeChat's jscode2session: every code is valid. */
function startFakeWechat(): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const code = new URL(req.url ?? '/', 'http://x').searchParams.get('js_code')
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ openid: `oid-${code}`, session_key: 'k' }))
  })
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })))
}

describe('client address keys', () => {
  it('keeps IPv4, unmaps IPv4-mapped IPv6 and groups IPv6 by /64', () => {
    expect(clientAddressKey('203.0.113.7')).toBe('203.0.113.7')
    expect(clientAddressKey('::ffff:203.0.113.7')).toBe('203.0.113.7')
    expect(clientAddressKey('2001:db8:1:2::1')).toBe('2001:db8:1:2::/64')
    expect(clientAddressKey('2001:0db8:0001:0002:ffff:1:2:3')).toBe('2001:db8:1:2::/64')
    expect(clientAddressKey('2001:db8::7')).toBe('2001:db8:0:0::/64')
    expect(clientAddressKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64')
    expect(clientAddressKey('::1')).toBe('0:0:0:0::/64')
    expect(clientAddressKey('not-an-address')).toBe('not-an-address')
  })
})

describe('bounded password hashing (LOGIN_HASH_CONCURRENCY)', () => {
  let t: TestApp | undefined
  afterEach(async () => {
    await t?.close()
    t = undefined
  })

  it('runs 1 hash at once with 2 waiting; logins beyond get 503 server_busy with Retry-After, the others succeed', async () => {
    let started = 0
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    const verify = async (password: string, stored: PasswordHash) => {
      started++
      await held
      return verifyPassword(password, stored)
    }
    t = await startTestApp('sqlite', { TRUST_PROXY: '127.0.0.1' }, { login: { hashConcurrency: 1, maxQueuedHashes: 2, verify } })
    const app = t
    const attempts = Array.from({ length: 6 }, (_, i) => login(app, 'alice', 'alice-password', `198.51.100.${i + 1}`))
    // Until the hash is released only one runs; two wait and three are refused.
    const settled: number[] = []
    attempts.forEach((p) => void p.then((res) => settled.push(res.statusCode)))
    while (settled.length < 3) await new Promise((r) => setTimeout(r, 5))
    expect(settled).toEqual([503, 503, 503])
    expect(started).toBe(1)
    release()
    const answers = await Promise.all(attempts)
    const busy = answers.filter((res) => res.statusCode === 503)
    expect(answers.filter((res) => res.statusCode === 200)).toHaveLength(3)
    expect(busy).toHaveLength(3)
    for (const res of busy) {
      expect(res.json()).toMatchObject({ success: false, error: 'server_busy' })
      expect(res.headers['retry-after']).toBe('1')
    }
    expect(started).toBe(3)
    // A refused login did not count as a failure: the gate is free again and logins pass.
    expect((await login(app, 'alice', 'alice-password', '198.51.100.1')).statusCode).toBe(200)
  })

  it('takes its default from LOGIN_HASH_CONCURRENCY and refuses a bad value', async () => {
    const { loadConfig } = await import('../../src/config/config.js')
    expect(loadConfig({}).loginHashConcurrency).toBe(4)
    expect(loadConfig({ LOGIN_HASH_CONCURRENCY: '2' }).loginHashConcurrency).toBe(2)
    expect(() => loadConfig({ LOGIN_HASH_CONCURRENCY: '0' })).toThrow(/LOGIN_HASH_CONCURRENCY/)
  })
})

describe.each(DIALECTS)('per-address and per-username login limits on %s', (dialect) => {
  let fake: Awaited<ReturnType<typeof startFakeWechat>>
  let t: TestApp
  let second: TestApp
  // Two instances on one database (SQLite: one file).
  const dir = mkdtempSync(join(tmpdir(), 'login-limits-'))
  const database = testDatabase(dialect, join(dir, 'shared.db'))
  beforeAll(async () => {
    fake = await startFakeWechat()
    const env = { TRUST_PROXY: '127.0.0.1', WECHAT_APPID: 'wx-app', WECHAT_SECRET: 'wx-secret', WECHAT_API_BASE: fake.url }
    t = await startTestApp(dialect, env, { database })
    second = await startTestApp(dialect, env, { database })
  })
  afterAll(async () => {
    await second.close()
    await t.close()
    await database.cleanup()
    rmSync(dir, { recursive: true, force: true })
    fake.server.closeAllConnections()
    await new Promise((r) => fake.server.close(r))
  })

  it(`refuses the ${LOGINS_PER_ADDRESS + 1}th password login from one address within a minute with 429 and Retry-After, counted across instances`, async () => {
    const address = '203.0.113.10'
    for (let i = 0; i < LOGINS_PER_ADDRESS; i++) {
      // Distinct usernames, alternately on each instance: only the address limit can refuse.
      const res = await login(i % 2 ? second : t, i === 0 ? 'alice' : `nobody-${i}`, i === 0 ? 'alice-password' : 'wrong')
      expect(res.statusCode).toBe(i === 0 ? 200 : 401)
    }
    // The balancer's own address (no X-Forwarded-For) is now limited, for any username on any instance.
    const refused = await login(second, 'bob', 'bob-password')
    expect(refused.statusCode).toBe(429)
    expect(refused.json()).toMatchObject({ success: false, error: 'rate_limited' })
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1)
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60)
    // Forwarded clients of the trusted balancer count apart.
    for (let i = 0; i < LOGINS_PER_ADDRESS; i++) expect((await login(t, `user-${i}`, 'wrong', address)).statusCode).toBe(401)
    expect((await login(second, 'alice', 'alice-password', address)).statusCode).toBe(429)
    expect((await login(second, 'alice', 'alice-password', '203.0.113.11')).statusCode).toBe(200)
  })

  it('counts IPv6 clients by their /64', async () => {
    for (let i = 0; i < LOGINS_PER_ADDRESS; i++) {
      expect((await login(t, `v6-${i}`, 'wrong', `2001:db8:aa:bb::${(i + 1).toString(16)}`)).statusCode).toBe(401)
    }
    expect((await login(t, 'bob', 'bob-password', '2001:db8:aa:bb:1234:5678:9abc:def0')).statusCode).toBe(429)
    expect((await login(t, 'bob', 'bob-password', '2001:db8:aa:cc::1')).statusCode).toBe(200)
  })

  it('limits mini-program logins per address too (429 with Retry-After past 30 a minute)', async () => {
    const wechat = (app: TestApp, code: string, forwardedFor: string) =>
      app.app.inject({ method: 'POST', url: '/api/v1/auth/wechat-login', payload: { code }, remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': forwardedFor } })
    for (let i = 0; i < LOGINS_PER_ADDRESS; i++) expect((await wechat(i % 2 ? second : t, `c${i}`, '192.0.2.50')).statusCode).toBe(200)
    const refused = await wechat(t, 'c-last', '192.0.2.50')
    expect(refused.statusCode).toBe(429)
    expect(refused.json()).toMatchObject({ error: 'rate_limited' })
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1)
    // The password and the mini-program logins of an address count together.
    expect((await login(t, 'alice', 'alice-password', '192.0.2.50')).statusCode).toBe(429)
    expect((await wechat(second, 'c-other', '192.0.2.51')).statusCode).toBe(200)
  })

  it(`refuses every attempt for a username after ${FAILURES_PER_USERNAME} failures from any addresses, even the right password, on every instance`, async () => {
    for (let i = 0; i < FAILURES_PER_USERNAME; i++) {
      expect((await login(i % 2 ? second : t, 'bob', `guess-${i}`, `100.64.${i}.1`)).statusCode).toBe(401)
    }
    const refused = await login(t, 'bob', 'bob-password', '100.64.200.1')
    expect(refused.statusCode).toBe(429)
    expect(refused.json()).toMatchObject({ error: 'rate_limited' })
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(60)
    expect((await login(second, 'bob', 'bob-password', '100.64.201.1')).statusCode).toBe(429)
    // Another account is not affected.
    expect((await login(second, 'alice', 'alice-password', '100.64.202.1')).statusCode).toBe(200)
  })
})
