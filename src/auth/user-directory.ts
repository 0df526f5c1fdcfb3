import type { Config, ConfiguredUser, Role } from '../config/config.js'
import { hashCost, parsePasswordHash, unmatchableHash, verifyPassword, DEFAULT_HASH_SPEC, type HashSpec, type PasswordHash } from './password-hash.js'
import { type Db } from '../storage/storage.js'
import { nowSeconds } from '../lib/time.js'
import { ConcurrencyGate } from '../lib/concurrency-gate.js'
import { AppError } from '../errors.js'

/** A gateway user as the API shows it. */
export interface AuthUser {
  id: string
  username: string
  display_name: string
  role: Role
  avatar_url?: string
  provider?: string
}

/** Checks a password against a stored hash (`verifyPassword`; tests observe it). */
export type PasswordVerifier = (password: string, stored: PasswordHash) => Promise<boolean>

/** Password checks waiting for a turn (contract §17: at most 64); one more is refused with 503. */
export const MAX_QUEUED_HASHES = 64

/**
 * The gate every password check passes (contract §17): `concurrency` hashes at once (LOGIN_HASH_CONCURRENCY),
 * `maxQueued` waiting; beyond that a login is answered 503 `server_busy` with `Retry-After: 1`, so a login
 * flood costs bounded memory and CPU and leaves the thread pool to the rest of the server.
 */
export function passwordHashGate(concurrency: number, maxQueued = MAX_QUEUED_HASHES): ConcurrencyGate {
  return new ConcurrencyGate(concurrency, maxQueued, () => new AppError('server_busy', 'Too many logins in progress; retry shortly', { retry_after: 1 }))
}

/**
 * Users come from configuration (CLOUD_AUTH_USERS plus the built-in admin) or from the
 * database (mini-program users). Lookups always read the current state, so a user removed
 * from configuration loses access with the next request after the restart that removed it.
 */
export class UserDirectory {
  private readonly configured: Map<string, { user: AuthUser; password: PasswordHash }>
  /** What an unknown username is checked against: the dearest parameters of any configured user. */
  private readonly unknownUserHash: PasswordHash

  constructor(
    users: Config['authUsers'],
    private readonly db: Db,
    private readonly verify: PasswordVerifier = verifyPassword,
    /** Bounds the password checks running and waiting; unset: not bounded (tests of the directory alone). */
    private readonly hashGate?: ConcurrencyGate,
  ) {
    this.configured = new Map(
      Object.entries(users).map(([username, u]: [string, ConfiguredUser]) => [
        username,
        { user: { id: username, username, display_name: u.display_name, role: u.role }, password: parsePasswordHash(u.passwordHash) },
      ]),
    )
    const known: HashSpec[] = [...this.configured.values()].map((entry) => entry.password)
    this.unknownUserHash = unmatchableHash(known.reduce((dearest, spec) => (hashCost(spec) > hashCost(dearest) ? spec : dearest), known[0] ?? DEFAULT_HASH_SPEC))
  }

  /**
   * The configured user with this username and password, or null. An unknown username costs the
   * same hash work as a known one (it is checked against a hash nothing matches), and the
   * comparison is constant-time. Throws 503 `server_busy` when too many checks wait already.
   */
  async authenticate(username: string, password: string): Promise<AuthUser | null> {
    const entry = this.configured.get(username)
    const stored = entry?.password ?? this.unknownUserHash
    const check = () => this.verify(password, stored)
    const same = await (this.hashGate ? this.hashGate.run(check) : check())
    return entry && same ? entry.user : null
  }

  /** A configured user, answered without the database; undefined for any other id. */
  configuredById(id: string): AuthUser | undefined {
    return this.configured.get(id)?.user
  }

  async findById(id: string): Promise<AuthUser | null> {
    const configured = this.configured.get(id)
    if (configured) return configured.user
    if (!id.startsWith('wechat_')) return null
    const row = await this.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst()
    return row ? toAuthUser(row) : null
  }

  async upsertWechatUser(openid: string, profile: { nickName?: string; avatarUrl?: string }): Promise<AuthUser> {
    const id = `wechat_${openid}`
    const now = nowSeconds()
    const display_name = profile.nickName ?? id
    const avatar_url = profile.avatarUrl ?? ''
    await this.db
      .insertInto('users')
      .values({ id, username: id, display_name, role: 'wechat', avatar_url, provider: 'wechat', created_at: now, updated_at: now })
      .onConflict((oc) =>
        oc.column('id').doUpdateSet({
          // Keep the stored profile when a later login sends none.
          display_name: profile.nickName ?? ((eb) => eb.ref('users.display_name')),
          avatar_url: profile.avatarUrl ?? ((eb) => eb.ref('users.avatar_url')),
          updated_at: now,
        }),
      )
      .execute()
    const row = await this.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirstOrThrow()
    return toAuthUser(row)
  }
}

function toAuthUser(row: { id: string; username: string; display_name: string; role: string; avatar_url: string | null; provider: string | null }): AuthUser {
  return {
    id: row.id,
    username: row.username,
    display_name: row.display_name,
    role: row.role as Role,
    avatar_url: row.avatar_url ?? '',
    provider: row.provider ?? 'wechat',
  }
}
