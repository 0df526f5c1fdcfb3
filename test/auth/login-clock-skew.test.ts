import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TestApp } from '../helpers/test-app.js'
import { DIALECTS } from '../helpers/dialects.js'
import { startTwoInstances, withClockSkew, type TwoInstances } from '../helpers/skewed-instances.js'

const MINUTES = 60_000
/** Further off than the 15-minute window. */
const SKEW_MS = 20 * MINUTES
const WINDOW_S = 15 * 60

/**
 * The failed-login counters are shared by every instance: a window one instance opened is
 * counted and ended by the others on the database's clock, whatever their hosts' clocks say.
 */
describe.each(DIALECTS)('the login throttle across instances whose clocks disagree, on %s', (dialect) => {
  let two: TwoInstances
  beforeAll(async () => {
    two = await startTwoInstances(dialect)
  })
  afterAll(() => two?.close())

  const login = (app: TestApp, skewMs: number, address: string, password: string) =>
    withClockSkew(skewMs, () => app.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'bob', password }, remoteAddress: address }))

  it('counts the failures made on both instances in one window: the 11th attempt is refused on either', async () => {
    const address = '10.20.0.1'
    for (let i = 0; i < 6; i++) expect((await login(two.a, 0, address, 'wrong')).statusCode).toBe(401)
    for (let i = 0; i < 4; i++) expect((await login(two.b, SKEW_MS, address, 'wrong')).statusCode).toBe(401)
    for (const [app, skew] of [[two.a, 0], [two.b, SKEW_MS], [two.b, -SKEW_MS]] as const) {
      const limited = await login(app, skew, address, 'bob-password')
      expect(limited.statusCode, `${app.config.instanceId} at ${skew} ms`).toBe(429)
      expect(limited.json()).toMatchObject({ success: false, error: 'rate_limited' })
    }
  })

  it('tells a refused client to retry within the window, whichever instance answers', async () => {
    const address = '10.20.0.2'
    for (let i = 0; i < 10; i++) expect((await login(two.a, 0, address, 'wrong')).statusCode).toBe(401)
    for (const [app, skew] of [[two.a, 0], [two.b, SKEW_MS], [two.b, -SKEW_MS]] as const) {
      const limited = await login(app, skew, address, 'bob-password')
      expect(limited.statusCode).toBe(429)
      const retryAfter = Number(limited.headers['retry-after'])
      expect(retryAfter, `${app.config.instanceId} at ${skew} ms`).toBeGreaterThan(WINDOW_S - 60)
      expect(retryAfter, `${app.config.instanceId} at ${skew} ms`).toBeLessThanOrEqual(WINDOW_S)
    }
  })
})
