import type { QueryClient } from '@tanstack/react-query'
import type { SessionStore } from '../session/session-store'

/**
 * Empties the query cache whenever the signed-in user goes away or changes: Sign out, and a 401
 * or a refused refresh that signs out, so no previous user's data is shown to the next one.
 * A refreshed token of the same user keeps the cache. Returns the unsubscribe function.
 */
export function clearCacheOnSignOut(store: Pick<SessionStore, 'subscribe' | 'getSnapshot'>, client: QueryClient): () => void {
  let user = store.getSnapshot()?.user.id ?? null
  return store.subscribe(() => {
    const next = store.getSnapshot()?.user.id ?? null
    if (user !== null && next !== user) client.clear()
    user = next
  })
}
