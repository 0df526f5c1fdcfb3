import { QueryClient } from '@tanstack/react-query'
import { describe, expect, it, vi } from 'vitest'
import { SessionStore } from '../session/session-store'
import { clearCacheOnSignOut } from './clear-cache-on-sign-out'

const memoryStorage = () => {
  const map = new Map<string, string>()
  return { getItem: (k: string) => map.get(k) ?? null, setItem: (k: string, v: string) => void map.set(k, v), removeItem: (k: string) => void map.delete(k) }
}
const user = (id: string) => ({ id, username: id, display_name: id, role: 'user' })

describe('signing out empties the query cache', () => {
  it('forgets the previous user’s data on sign-out (a 401 included), keeps it across a token refresh', () => {
    const store = new SessionStore({ storage: memoryStorage(), refresh: vi.fn() })
    const client = new QueryClient()
    store.signIn({ token: 't1', expires_in: 3600, user: user('root') })
    clearCacheOnSignOut(store, client)
    client.setQueryData(['machines', 'list'], { devices: ['pnp-01'] })
    store.signIn({ token: 't2', expires_in: 3600, user: user('root') })
    expect(client.getQueryData(['machines', 'list'])).toEqual({ devices: ['pnp-01'] })
    store.signOut()
    expect(client.getQueryData(['machines', 'list'])).toBeUndefined()
    store.signIn({ token: 't3', expires_in: 3600, user: user('alice') })
    client.setQueryData(['machines', 'list'], { devices: [] })
    store.signIn({ token: 't4', expires_in: 3600, user: user('bob') })
    expect(client.getQueryData(['machines', 'list'])).toBeUndefined()
  })
})
