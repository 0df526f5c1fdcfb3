import type { FastifyRequest } from 'fastify'
import { AppError } from '../errors.js'
import type { TokenService } from './token-service.js'
import type { AuthUser, UserDirectory } from './user-directory.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated gateway user, set by `requireUser`/`requireAdmin`. */
    user: AuthUser | null
  }
}

const BEARER = /^bearer ([A-Za-z0-9_=-]+\.[A-Za-z0-9_=-]+\.[A-Za-z0-9_=-]*)$/i

/** Reads `Authorization: Bearer <token>` only (no query string, no cookie). */
export class Authenticator {
  constructor(
    private readonly tokens: TokenService,
    private readonly users: UserDirectory,
  ) {}

  /** The user of a request's token, or null when it carries none or an invalid one. */
  async identify(request: FastifyRequest): Promise<AuthUser | null> {
    const header = request.headers.authorization
    if (typeof header !== 'string') return null
    const match = BEARER.exec(header)
    if (!match) return null
    let claims
    try {
      claims = await this.tokens.verify(match[1]!)
    } catch {
      return null
    }
    const user = await this.users.findById(claims.sub)
    return user && user.username === claims.username ? user : null
  }

  /** preHandler: any authenticated gateway user. */
  readonly requireUser = async (request: FastifyRequest): Promise<void> => {
    const user = await this.identify(request)
    if (!user) throw new AppError('unauthorized', 'Missing, invalid or expired token')
    request.user = user
  }

  /** preHandler: administrators only (401 without a valid token, 403 for other roles). */
  readonly requireAdmin = async (request: FastifyRequest): Promise<void> => {
    await this.requireUser(request)
    if (request.user?.role !== 'admin') throw new AppError('forbidden', 'Administrator rights required')
  }
}

export const isAdmin = (user: AuthUser | null | undefined) => user?.role === 'admin'
