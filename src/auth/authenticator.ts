import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import { AppError } from '../errors.js'
import type { SessionRevocations } from './session-revocations.js'
import type { TokenClaims, TokenService } from './token-service.js'
import type { AuthUser, UserDirectory } from './user-directory.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated gateway user, set by `requireUser`/`requireAdmin`. */
    user: AuthUser | null
    /** The claims of the request's token (session id, first login), set with `user`. */
    tokenClaims: TokenClaims | null
    /**
     * Whether the token's session was ended, being read (set by `userHook`'s fast path, awaited by
     * `sessionHook` before the handler); an Error when the read failed. Never rejects.
     */
    sessionCheck: Promise<boolean | Error> | null
  }
}

interface Identified {
  user: AuthUser
  claims: TokenClaims
}

const BEARER = /^bearer ([A-Za-z0-9_=-]+\.[A-Za-z0-9_=-]+\.[A-Za-z0-9_=-]*)$/i

/** Reads `Authorization: Bearer <token>` only (no query string, no cookie). */
export class Authenticator {
  constructor(
    private readonly tokens: TokenService,
    private readonly users: UserDirectory,
    /** Sessions ended by logout, on any instance: their tokens are refused. */
    private readonly revocations: SessionRevocations,
  ) {}

  /** The user of a request's token, or null when it carries none, an invalid one or one of an ended session. */
  async identify(request: FastifyRequest): Promise<AuthUser | null> {
    return (await this.identified(request))?.user ?? null
  }

  private async identified(request: FastifyRequest): Promise<Identified | null> {
    const found = this.knownUser(request) ?? (await this.fromToken(request))
    if (!found || (await this.revocations.isRevoked(found.claims.sid))) return null
    return found
  }

  private async fromToken(request: FastifyRequest): Promise<Identified | null> {
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
    return user && user.username === claims.username ? { user, claims } : null
  }

  /**
   * The user of a token already verified and of a configured user, read from memory without a
   * promise; undefined when `identify` has to decide (first sight of a token, a database user).
   */
  private knownUser(request: FastifyRequest): Identified | undefined {
    const header = request.headers.authorization
    // Only tokens that matched BEARER and verified are in the token cache, so no regex here.
    if (typeof header !== 'string' || header.length < 8 || header.charCodeAt(6) !== 0x20) return undefined
    if (!header.startsWith('Bearer') && header.slice(0, 6).toLowerCase() !== 'bearer') return undefined
    const claims = this.tokens.alreadyVerified(header.slice(7))
    const user = claims && this.users.configuredById(claims.sub)
    return user && user.username === claims.username ? { user, claims } : undefined
  }

  /**
   * Any authenticated gateway user (for `await`; routes use `userHook`). Every call asks whether
   * the token's session was ended (`SessionRevocations`: from memory for a session found live
   * within 5 s, else a primary-key read batched with concurrent ones); a logout on any instance
   * is announced to every instance.
   */
  readonly requireUser = async (request: FastifyRequest): Promise<void> => {
    const found = await this.identified(request)
    if (!found) throw new AppError('unauthorized', 'Missing, invalid or expired token')
    request.user = found.user
    request.tokenClaims = found.claims
  }

  /**
   * onRequest hook (only there): any authenticated gateway user. A callback hook: for a token
   * already verified of a configured user it answers at once, without a promise, and, unless the
   * session was found live a moment ago (the common case: nothing more), only starts reading
   * whether the token's session was ended; `sessionHook` (preHandler, on every route)
   * waits for that read before the handler runs. So early answers (413, `100 Continue`) still go
   * out before the body is read, and no handler runs for an ended session.
   */
  readonly userHook = (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    const found = this.knownUser(request)
    if (found === undefined) return void this.requireUser(request).then(() => done(), done)
    request.user = found.user
    request.tokenClaims = found.claims
    // The common case: a session this instance found live a moment ago, answered without a promise.
    const known = this.revocations.knownAnswer(found.claims.sid)
    if (known === false) return done()
    request.sessionCheck = this.revocations.isRevoked(found.claims.sid).then(
      (revoked) => revoked,
      (err: unknown) => (err instanceof Error ? err : new Error(String(err))),
    )
    done()
  }

  /** preHandler hook of the whole app: refuses (401) a request whose session `userHook` found ended meanwhile. */
  readonly sessionHook = (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    const check = request.sessionCheck
    if (check === null) return done()
    request.sessionCheck = null
    void check.then((revoked) => {
      if (revoked === false) return done()
      request.user = null
      request.tokenClaims = null
      done(revoked === true ? new AppError('unauthorized', 'Missing, invalid or expired token') : revoked)
    })
  }

  /** preHandler: administrators only (401 without a valid token, 403 for other roles). */
  readonly requireAdmin = async (request: FastifyRequest): Promise<void> => {
    await this.requireUser(request)
    if (request.user?.role !== 'admin') throw new AppError('forbidden', 'Administrator rights required')
  }
}

export const isAdmin = (user: AuthUser | null | undefined) => user?.role === 'admin'
