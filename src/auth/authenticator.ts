import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
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

  /**
   * The user of a token already verified and of a configured user, read from memory without a
   * promise; undefined when `identify` has to decide (first sight of a token, a database user).
   */
  private knownUser(request: FastifyRequest): AuthUser | undefined {
    const header = request.headers.authorization
    // Only tokens that matched BEARER and verified are in the token cache, so no regex here.
    if (typeof header !== 'string' || header.length < 8 || header.charCodeAt(6) !== 0x20) return undefined
    if (!header.startsWith('Bearer') && header.slice(0, 6).toLowerCase() !== 'bearer') return undefined
    const claims = this.tokens.alreadyVerified(header.slice(7))
    const user = claims && this.users.configuredById(claims.sub)
    return user && user.username === claims.username ? user : undefined
  }

  /** Any authenticated gateway user (for `await`; routes use `userHook`). */
  readonly requireUser = async (request: FastifyRequest): Promise<void> => {
    const user = this.knownUser(request) ?? (await this.identify(request))
    if (!user) throw new AppError('unauthorized', 'Missing, invalid or expired token')
    request.user = user
  }

  /**
   * onRequest/preHandler hook: any authenticated gateway user. A callback hook, so the common
   * case (a known token of a configured user) costs no promise on every proxied request.
   */
  readonly userHook = (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    const user = this.knownUser(request)
    if (user === undefined) return void this.requireUser(request).then(() => done(), done)
    request.user = user
    done()
  }

  /** preHandler: administrators only (401 without a valid token, 403 for other roles). */
  readonly requireAdmin = async (request: FastifyRequest): Promise<void> => {
    await this.requireUser(request)
    if (request.user?.role !== 'admin') throw new AppError('forbidden', 'Administrator rights required')
  }
}

export const isAdmin = (user: AuthUser | null | undefined) => user?.role === 'admin'
