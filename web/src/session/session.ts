import { useSyncExternalStore } from 'react'
import { ApiError } from '../api/api-error'
import { SessionStore, type Session, type TokenAnswer } from './session-store'

async function refresh(token: string): Promise<TokenAnswer> {
  const response = await fetch('/api/v1/auth/refresh', { method: 'POST', headers: { authorization: `Bearer ${token}` } })
  const data = (await response.json().catch(() => ({}))) as Record<string, unknown>
  if (!response.ok) throw new ApiError(response.status, String(data.error), String(data.message), data)
  return data as unknown as TokenAnswer
}

/** The tab's one session. */
export const sessionStore = new SessionStore({ storage: window.sessionStorage, refresh })

export function useSession(): Session | null {
  return useSyncExternalStore(sessionStore.subscribe, sessionStore.getSnapshot)
}

export const isAdmin = (session: Session | null): boolean => session?.user.role === 'admin'
