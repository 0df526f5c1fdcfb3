import { describe, expect, it, beforeAll, afterAll } from 'vitest'
import { CONSOLE_TOKEN_FAILURES } from '../../src/platform/admin/console-token-guard.js'
import { DIALECTS } from '../helpers/dialects.js'
import { CONSOLE, CONSOLE_TOKEN, startPlatformApp, type PlatformApp } from './platform-kit.js'

/** Wrong X-Console-Token values are limited per client address (contract §2's 429; §8's constant-time compare). */
describe.each(DIALECTS)('console token failures on %s', (dialect) => {
  let t: PlatformApp
  beforeAll(async () => {
    t = await startPlatformApp(dialect)
  })
  afterAll(() => t.close())

  const summary = (token: string, remoteAddress: string) =>
    t.app.inject({ method: 'GET', url: '/api/admin/summary', headers: { 'x-console-token': token }, remoteAddress })

  it('answers 429 with Retry-After after 10 wrong tokens from one address, the right token included; other addresses go on', async () => {
    const ip = '10.91.0.1'
    for (let i = 0; i < CONSOLE_TOKEN_FAILURES; i++) {
      const res = await summary(`wrong-${i}`, ip)
      expect(res.statusCode).toBe(401)
      expect(res.json()).toMatchObject({ success: false, error: 'unauthorized' })
    }
    for (const token of ['wrong-again', CONSOLE_TOKEN]) {
      const limited = await summary(token, ip)
      expect(limited.statusCode).toBe(429)
      expect(limited.json()).toMatchObject({ success: false, error: 'rate_limited', message: expect.any(String) })
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0)
    }
    // Everywhere the console token is accepted (binding for a user, acting as a device), and the gateway token still works from there.
    expect((await t.app.inject({ method: 'POST', url: '/v1/bind/verify', headers: CONSOLE, payload: { code: '000000', user_id: 'alice' }, remoteAddress: ip })).statusCode).toBe(429)
    expect((await summary(CONSOLE_TOKEN, '10.91.0.2')).statusCode).toBe(200)
  })

  it('counts IPv6 clients by their /64', async () => {
    for (let i = 0; i < CONSOLE_TOKEN_FAILURES; i++) expect((await summary('wrong', `2001:db8:91:1::${(i + 1).toString(16)}`)).statusCode).toBe(401)
    expect((await summary(CONSOLE_TOKEN, '2001:db8:91:1:ffff::1')).statusCode).toBe(429)
    expect((await summary(CONSOLE_TOKEN, '2001:db8:91:2::1')).statusCode).toBe(200)
  })

  it('never limits the right token, and a right token does not reset the failures', async () => {
    const ip = '10.91.0.3'
    for (let i = 0; i < 3 * CONSOLE_TOKEN_FAILURES; i++) expect((await summary(CONSOLE_TOKEN, ip)).statusCode).toBe(200)
    for (let i = 0; i < CONSOLE_TOKEN_FAILURES - 1; i++) {
      expect((await summary('wrong', ip)).statusCode).toBe(401)
      expect((await summary(CONSOLE_TOKEN, ip)).statusCode).toBe(200)
    }
    expect((await summary('wrong', ip)).statusCode).toBe(401)
    expect((await summary(CONSOLE_TOKEN, ip)).statusCode).toBe(429)
  })
})
