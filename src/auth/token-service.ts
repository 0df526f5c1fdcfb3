import { SignJWT, jwtVerify } from 'jose'
import { AppError } from '../errors.js'
import type { AuthUser } from './user-directory.js'

export const TOKEN_ISSUER = 'fleetgate'
const REQUIRED_CLAIMS = ['sub', 'username', 'role', 'iat', 'exp']

export interface TokenClaims {
  sub: string
  username: string
  role: string
}

/** HS256 JWTs: the algorithm is pinned, the issuer checked, every claim required. */
export class TokenService {
  private readonly key: Uint8Array
  readonly expiresIn: number

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

  async verify(token: string): Promise<TokenClaims> {
    try {
      const { payload } = await jwtVerify(token, this.key, {
        algorithms: ['HS256'],
        issuer: TOKEN_ISSUER,
        requiredClaims: REQUIRED_CLAIMS,
        clockTolerance: 60,
      })
      const { sub, username, role } = payload
      if (typeof sub !== 'string' || typeof username !== 'string' || typeof role !== 'string') throw new Error('claim types')
      return { sub, username, role }
    } catch {
      throw new AppError('unauthorized', 'Invalid or expired token')
    }
  }
}
