import { SignJWT, jwtVerify } from 'jose'
import { AppError } from '../errors.js'
import type { AuthUser } from './user-directory.js'

export const TOKEN_ISSUER = 'fleetgate'
const REQUIRED_CLAIMS = ['sub', 'username', 'role', 'iat', 'exp']
export const CLOCK_SKEW_S = 60
const VERIFIED_CACHE_SIZE = 10_000

export interface TokenClaims {
  sub: string
  username: string
  role: string
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

  constructor(secret: string, expireHours: number) {
    this.key = new TextEncoder().encode(secret)
    this.expiresIn = Math.round(expireHours * 3600)
  }

  async sign(user: AuthUser): Promise<{ token: string; expires_in: number }> {
    const now = Math.floor(Date.now() / 1000)
    const token = await new SignJWT({ username: user.username, role: user.role })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(user.id)
      .setIssuer(TOKEN_ISSUER)
      .setIssuedAt(now)
      .setExpirationTime(now + this.expiresIn)
      .sign(this.key)
    return { token, expires_in: this.expiresIn }
  }

  /** The claims of a token verified before and not expired since; undefined otherwise. */
  alreadyVerified(token: string): TokenClaims | undefined {
    const last = this.last
    const hit = last !== undefined && last.token === token ? last : this.verified.get(token)
    if (hit === undefined || Date.now() / 1000 >= hit.exp + CLOCK_SKEW_S) return undefined
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
      })
      const { sub, username, role, exp } = payload
      if (typeof sub !== 'string' || typeof username !== 'string' || typeof role !== 'string') throw new Error('claim types')
      if (this.verified.size >= VERIFIED_CACHE_SIZE) this.verified.delete(this.verified.keys().next().value!)
      this.verified.set(token, { token, claims: { sub, username, role }, exp: exp! })
      return { sub, username, role }
    } catch {
      throw new AppError('unauthorized', 'Invalid or expired token')
    }
  }
}
