import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LoginThrottle } from '../../src/auth/login-throttle.js'
import { AppError } from '../../src/errors.js'
import type { Storage } from '../../src/storage/storage.js'
import { DIALECTS, openTestStorage } from '../helpers/dialects.js'
import { settableClock } from '../helpers/test-clocks.js'

const T0 = 1_800_000_000_000
const WINDOW_MS = 60_000
const LIMIT = 3

/** What `claim` refused with: the `retry_after` seconds of its 429, or undefined when it let the attempt through. */
async function refusal(throttle: LoginThrottle, key: string): Promise<number | undefined> {
  try {
    await throttle.claim(key, 'too many')
    return undefined
  } catch (err) {
    expect(err).toBeInstanceOf(AppError)
    expect((err as AppError).code).toBe('rate_limited')
    return (err as AppError).extra.retry_after as number
  }
}

describe.each(DIALECTS)('the login throttle’s window on the database’s clock, on %s', (dialect) => {
  let storage: Storage & { cleanup(): Promise<void> }
  beforeAll(async () => {
    storage = await openTestStorage(dialect)
  })
  afterAll(() => storage.cleanup())

  it('refuses past the limit until the window the first failure opened has ended, then counts afresh', async () => {
    const clock = settableClock(T0)
    const throttle = new LoginThrottle({ ...storage, clock }, 'window', LIMIT, WINDOW_MS)
    for (let i = 0; i < LIMIT; i++) expect(await refusal(throttle, 'k')).toBeUndefined()
    expect(await refusal(throttle, 'k')).toBe(WINDOW_MS / 1000)
    clock.set(T0 + WINDOW_MS - 1)
    expect(await refusal(throttle, 'k')).toBe(1)
    clock.set(T0 + WINDOW_MS)
    expect(await refusal(throttle, 'k')).toBeUndefined()
    const row = await storage.db.selectFrom('login_counters').select(['failures', 'window_start']).where('key', '=', 'window:k').executeTakeFirstOrThrow()
    expect({ failures: Number(row.failures), window_start: Number(row.window_start) }).toEqual({ failures: 1, window_start: T0 + WINDOW_MS })
  })

  it('drops, on a success, the key and the keys whose window has ended on the database’s clock', async () => {
    const clock = settableClock(T0)
    const throttle = new LoginThrottle({ ...storage, clock }, 'prune', LIMIT, WINDOW_MS)
    await throttle.claim('ended', 'too many')
    clock.set(T0 + 1)
    await throttle.claim('open', 'too many')
    clock.set(T0 + WINDOW_MS)
    await throttle.claim('me', 'too many')
    await throttle.succeed('me')
    const keys = await storage.db.selectFrom('login_counters').select('key').where('key', 'like', 'prune:%').orderBy('key').execute()
    expect(keys.map((k) => k.key)).toEqual(['prune:open'])
  })
})
