import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { SessionStore, refreshDelay, type TokenAnswer } from './session-store'

const user = { id: 'root', username: 'root', display_name: 'Root', role: 'admin' }
const memoryStorage = () => {
  const map = new Map<string, string>()
  return { getItem: (k: string) => map.get(k) ?? null, setItem: (k: string, v: string) => void map.set(k, v), removeItem: (k: string) => void map.delete(k), map }
}

describe('session store', () => {
  beforeEach(() => vi.useFakeTimers({ now: 1_000_000 }))
  afterEach(() => vi.useRealTimers())

  it('keeps the token in storage and forgets it on sign out', () => {
    const storage = memoryStorage()
    const store = new SessionStore({ storage, refresh: vi.fn() })
    store.signIn({ token: 't1', expires_in: 3600, user })
    expect(JSON.parse(storage.map.get('fleetgate.session')!).token).toBe('t1')
    expect(new SessionStore({ storage, refresh: vi.fn() }).getSnapshot()?.token).toBe('t1')
    store.signOut()
    expect(storage.map.size).toBe(0)
    expect(store.getSnapshot()).toBeNull()
  })

  it('refreshes before the token expires, and keeps refreshing', async () => {
    let n = 1
    const refresh = vi.fn(async (): Promise<TokenAnswer> => ({ token: `t${++n}`, expires_in: 3600, user }))
    const store = new SessionStore({ storage: memoryStorage(), refresh })
    store.signIn({ token: 't1', expires_in: 3600, user })
    // An hour-long token is refreshed 5 minutes before it expires.
    await vi.advanceTimersByTimeAsync(55 * 60_000 - 1)
    expect(refresh).not.toHaveBeenCalled()
    await vi.advanceTimersByTimeAsync(1)
    expect(refresh).toHaveBeenCalledWith('t1')
    expect(store.getSnapshot()?.token).toBe('t2')
    await vi.advanceTimersByTimeAsync(55 * 60_000)
    expect(store.getSnapshot()?.token).toBe('t3')
  })

  it('refreshes a short-lived token at 80 % of its life', () => {
    expect(refreshDelay({ token: 't', user, issuedAt: 0, expiresAt: 100_000 }, 0)).toBe(80_000)
    expect(refreshDelay({ token: 't', user, issuedAt: 0, expiresAt: 100_000 }, 90_000)).toBe(0)
  })

  it('signs out when the server refuses the refresh', async () => {
    const refresh = vi.fn(async () => {
      throw Object.assign(new Error('expired'), { status: 401 })
    })
    const store = new SessionStore({ storage: memoryStorage(), refresh })
    const seen: (string | undefined)[] = []
    store.subscribe(() => seen.push(store.getSnapshot()?.token))
    store.signIn({ token: 't1', expires_in: 60, user })
    await vi.advanceTimersByTimeAsync(60_000)
    expect(store.getSnapshot()).toBeNull()
    expect(seen).toEqual(['t1', undefined])
  })

  it('retries a refresh that failed for a network reason while the token is still valid', async () => {
    const refresh = vi
      .fn<(t: string) => Promise<TokenAnswer>>()
      .mockRejectedValueOnce(new TypeError('network'))
      .mockResolvedValueOnce({ token: 't2', expires_in: 3600, user })
    const store = new SessionStore({ storage: memoryStorage(), refresh })
    store.signIn({ token: 't1', expires_in: 3600, user })
    await vi.advanceTimersByTimeAsync(55 * 60_000)
    expect(store.getSnapshot()?.token).toBe('t1')
    await vi.advanceTimersByTimeAsync(30_000)
    expect(store.getSnapshot()?.token).toBe('t2')
  })

  it('ignores an expired token left in storage', () => {
    const storage = memoryStorage()
    storage.setItem('fleetgate.session', JSON.stringify({ token: 'old', user, issuedAt: 0, expiresAt: 999_999 }))
    expect(new SessionStore({ storage, refresh: vi.fn() }).getSnapshot()).toBeNull()
  })
})
