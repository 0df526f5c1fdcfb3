export interface SessionUser {
  id: string
  username: string
  display_name: string
  role: string
}

export interface Session {
  token: string
  user: SessionUser
  /** Epoch milliseconds. */
  expiresAt: number
  /** Epoch milliseconds when the token was issued (to size the refresh margin). */
  issuedAt: number
}

export interface TokenAnswer {
  token: string
  expires_in: number
  user: SessionUser
}

export interface SessionStoreOptions {
  storage: Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>
  /** Exchanges a valid token for a fresh one (POST /api/v1/auth/refresh). */
  refresh: (token: string) => Promise<TokenAnswer>
  now?: () => number
}

const KEY = 'fleetgate.session'
/** Refresh this long before expiry (or at 80 % of a short lifetime). */
const MAX_MARGIN_MS = 5 * 60_000

export function refreshDelay(session: Session, now: number): number {
  const lifetime = session.expiresAt - session.issuedAt
  const margin = Math.min(MAX_MARGIN_MS, lifetime * 0.2)
  return Math.max(0, session.expiresAt - margin - now)
}

/**
 * The signed-in state: the JWT in sessionStorage, refreshed before it expires. An external
 * store read with useSyncExternalStore, so no component copies it into state.
 */
export class SessionStore {
  private session: Session | null
  private listeners = new Set<() => void>()
  private timer: ReturnType<typeof setTimeout> | undefined
  private readonly now: () => number

  constructor(private readonly options: SessionStoreOptions) {
    this.now = options.now ?? Date.now
    this.session = this.load()
    this.schedule()
  }

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  getSnapshot = (): Session | null => this.session

  signIn(answer: TokenAnswer): void {
    const now = this.now()
    this.set({ token: answer.token, user: answer.user, issuedAt: now, expiresAt: now + answer.expires_in * 1000 })
  }

  signOut(): void {
    this.set(null)
  }

  /** Refreshes now; a refusal (expired, user removed) signs out. */
  async refreshNow(): Promise<void> {
    const current = this.session
    if (!current) return
    try {
      const answer = await this.options.refresh(current.token)
      if (this.session?.token === current.token) this.signIn(answer)
    } catch (err) {
      const status = (err as { status?: number }).status
      if (status === 401 || this.now() >= current.expiresAt) this.signOut()
      else this.timer = setTimeout(() => void this.refreshNow(), 30_000)
    }
  }

  private set(session: Session | null): void {
    this.session = session
    if (session) this.options.storage.setItem(KEY, JSON.stringify(session))
    else this.options.storage.removeItem(KEY)
    this.schedule()
    for (const listener of this.listeners) listener()
  }

  private load(): Session | null {
    try {
      const raw = this.options.storage.getItem(KEY)
      if (!raw) return null
      const session = JSON.parse(raw) as Session
      if (typeof session.token !== 'string' || session.expiresAt <= this.now()) return null
      return session
    } catch {
      return null
    }
  }

  private schedule(): void {
    clearTimeout(this.timer)
    this.timer = undefined
    if (!this.session) return
    // setTimeout holds at most 2^31-1 ms; a longer wait is re-armed when it fires.
    const delay = Math.min(refreshDelay(this.session, this.now()), 2 ** 31 - 1)
    this.timer = setTimeout(() => {
      if (this.session && refreshDelay(this.session, this.now()) > 0) this.schedule()
      else void this.refreshNow()
    }, delay)
  }
}
