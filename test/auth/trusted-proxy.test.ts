import { afterEach, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/config.js'
import { startTestApp, type TestApp } from '../helpers/test-app.js'

const wrongLogin = (t: TestApp, forwardedFor: string) =>
  t.app.inject({
    method: 'POST',
    url: '/api/v1/auth/login',
    payload: { username: 'alice', password: 'wrong' },
    remoteAddress: '127.0.0.1',
    headers: { 'x-forwarded-for': forwardedFor },
  })

async function failElevenTimes(t: TestApp, forwardedFor: (i: number) => string): Promise<number[]> {
  const statuses: number[] = []
  for (let i = 0; i < 11; i++) statuses.push((await wrongLogin(t, forwardedFor(i))).statusCode)
  return statuses
}

// Behind a load balancer every client arrives from the balancer's address.
describe('login throttling behind a load balancer (TRUST_PROXY)', () => {
  let t: TestApp | undefined
  afterEach(async () => {
    await t?.close()
    t = undefined
  })

  it('ignores X-Forwarded-For unless the peer is trusted: a client cannot escape the limit by forging it', async () => {
    t = await startTestApp('sqlite')
    const statuses = await failElevenTimes(t, (i) => `203.0.113.${i}`)
    expect(statuses.at(-1)).toBe(429)
  })

  it('counts each forwarded client apart when the balancer is trusted, so one client cannot lock out the others', async () => {
    t = await startTestApp('sqlite', { TRUST_PROXY: '127.0.0.1' })
    const attacker = await failElevenTimes(t, () => '203.0.113.7')
    expect(attacker.at(-1)).toBe(429)
    expect((await wrongLogin(t, '198.51.100.20')).statusCode).toBe(401)
  })

  it('refuses a TRUST_PROXY entry that is not an address, a range or a known name', () => {
    expect(() => loadConfig({ TRUST_PROXY: '127.0.0.1, nginx.local' })).toThrow(/TRUST_PROXY/)
    expect(() => loadConfig({ TRUST_PROXY: '10.0.0.0/33' })).toThrow(/TRUST_PROXY/)
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, ::1, loopback' }).trustProxy).toEqual(['10.0.0.0/8', '::1', 'loopback'])
  })
})
