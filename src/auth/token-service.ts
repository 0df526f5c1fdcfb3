import { randomBytes } from 'node:crypto'
import { SignJWT, jwtVerify } from 'jose'
import { AppError } from '../errors.js'
import type { AuthUser } from './user-directory.js'

export const TOKEN_ISSUER = 'fleetgate'
/** `sid` (session id) and `auth_time` (the session's first login, epoch seconds) end and bound sessions (§17). */
const REQUIRED_CLAIMS = ['sub', 'username', 'role', 'iat', 'exp', 'sid', 'auth_time']
export const CLOCK_SKEW_S = 60
const VERIFIED_CACHE_SIZE = 10_000

export interface TokenClaims {
  sub: string
  username: string
  role: string
  /** The session (a login and the tokens refreshed from it): what logout ends. */
  sid: string
  /** The session's first login, epoch seconds. */
  auth_time: number
  /** The token's expiry, epoch seconds. */
  exp: number
}

/** A session a token belongs to: a new one at login, the same one through refreshes. */
export interface TokenSession {
  sid: string
  auth_time: number
}

export interface TokenServiceOptions {
  /** `CLOUD_JWT_MAX_SESSION_HOURS`: no refresh past this long after the session's first login. */
  maxSessionHours?: number
  /** Epoch milliseconds (tests move it). */
  now?: () => number
}

interface VerifiedToken {
  token: string
  claims: TokenClaims
  exp: number
}

/** HS256 JWTs: the algorithm is pinned, the issuer checked, every claim required. */
export class TokenService {
  private readonly key: Uint8Array
  readonly expiresIn: number
  /**
   * Tokens already verified, until their `exp` (plus skew): a WebCrypto HMAC check costs about
   * 100 µs, which dominated every proxied request. Bounded; the oldest entry goes first.
   */
  private readonly verified = new Map<string, VerifiedToken>()
  /** The token found last: clients send theirs again and again, and comparing it costs less than hashing it. */
  private last: VerifiedToken | undefined

  /** Longest session, seconds. */
  readonly maxSession: number
  private readonly now: () => number

  constructor(secret: string, expireHours: number, options: TokenServiceOptions = {}) {
    this.key = new TextEncoder().encode(secret)
    this.expiresIn = Math.round(expireHours * 3600)
    this.maxSession = Math.round((options.maxSessionHours ?? 720) * 3600)
    this.now = options.now ?? (() => Date.now())
  }

  /**
   * A token for `user`: of a new session (a login), or of `session` (a refresh). No token outlives
   * its session: `exp` is at most `auth_time` + the longest session.
   */
  async sign(user: AuthUser, session?: TokenSession): Promise<{ token: string; expires_in: number }> {
    const now = Math.floor(this.now() / 1000)
    const { sid, auth_time } = session ?? { sid: randomBytes(16).toString('base64url'), auth_time: now }
    const exp = Math.min(now + this.expiresIn, auth_time + this.maxSession)
    const token = await new SignJWT({ username: user.username, role: user.role, sid, auth_time })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(user.id)
      .setIssuer(TOKEN_ISSUER)
      .setIssuedAt(now)
      .setExpirationTime(exp)
      .sign(this.key)
    return { token, expires_in: exp - now }
  }

  /** The session of a token being refreshed; 401 once the session is older than CLOUD_JWT_MAX_SESSION_HOURS. */
  refreshable(claims: TokenClaims): TokenSession {
    if (this.now() / 1000 >= claims.auth_time + this.maxSession) {
      throw new AppError('unauthorized', 'Session too old to refresh; log in again')
    }
    return { sid: claims.sid, auth_time: claims.auth_time }
  }

  /** After this time (epoch ms) no token of the session can be valid, skew included. */
  sessionEndMs(claims: TokenClaims): number {
    return (Math.max(claims.exp, claims.auth_time + this.maxSession) + CLOCK_SKEW_S) * 1000
  }

  /** The claims of a token verified before and not expired since; undefined otherwise. */
  alreadyVerified(token: string): TokenClaims | undefined {
    const last = this.last
    const hit = last !== undefined && last.token === token ? last : this.verified.get(token)
    if (hit === undefined || this.now() / 1000 >= hit.exp + CLOCK_SKEW_S) return undefined
    this.last = hit
    return hit.claims
  }

  async verify(token: string): Promise<TokenClaims> {
    const hit = this.alreadyVerified(token)
    if (hit) return hit
    try {
      const { payload } = await jwtVerify(token, this.key, {
        algorithms: ['HS256'],
        issuer: TOKEN_ISSUER,
        requiredClaims: REQUIRED_CLAIMS,
        clockTolerance: CLOCK_SKEW_S,
        currentDate: new Date(this.now()),
      })
      const { sub, username, role, exp, sid, auth_time } = payload
      if (typeof sub !== 'string' || typeof username !== 'string' || typeof role !== 'string') throw new Error('claim types')
      if (typeof sid !== 'string' || sid.length === 0 || sid.length > 64) throw new Error('claim types')
      if (typeof auth_time !== 'number' || !Number.isFinite(auth_time) || typeof exp !== 'number') throw new Error('claim types')
      const claims: TokenClaims = { sub, username, role, sid, auth_time, exp }
      if (this.verified.size >= VERIFIED_CACHE_SIZE) this.verified.delete(this.verified.keys().next().value!)
      this.verified.set(token, { token, claims, exp })
      return claims
    } catch {
      throw new AppError('unauthorized', 'Invalid or expired token')
    }
  }
}
