import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { AppError } from '../errors.js'
import type { AppDeps } from '../app-deps.js'
import { LoginBody, LogoutAnswer, TokenAnswer, WechatLoginBody } from './auth-schemas.js'
import { LoginLimits } from './login-limits.js'
import { exchangeWechatCode } from './wechat-client.js'

/** POST /api/v1/auth/login, /wechat-login, /refresh, /logout (contract §3, §17). */
export const authRoutes: FastifyPluginAsyncTypebox<{ deps: AppDeps }> = async (app, { deps }) => {
  const { users, tokens, authenticator, sessions, config, loginGate } = deps
  const limits = new LoginLimits(deps.storage, deps.loginThrottle)
  const tags = ['auth']

  const loginLimits =
    'Limits (contract §3, §17): 30 logins a minute per client address (an IPv6 /64), password and mini-program together, ' +
    'then 429 rate_limited with Retry-After; 10 failures per (address, username) and 20 per username in 15 minutes, then 429 until the window ends, ' +
    'even with the right password; too many password checks at once → 503 server_busy with Retry-After.'

  /** A password login: the limits, the password check, the token. */
  const passwordLogin = async (address: string, username: string, password: string) => {
    const attempt = await limits.password(address, username)
    let user
    try {
      user = await users.authenticate(username, password)
    } catch (err) {
      // Not a wrong credential (503 server_busy, a database error): it does not count as one.
      await attempt.abandoned()
      throw err
    }
    if (!user) {
      attempt.failed()
      throw new AppError('unauthorized', 'Wrong username or password')
    }
    await attempt.succeeded()
    return { success: true, ...(await tokens.sign(user)), user }
  }

  app.post(
    '/login',
    { schema: { tags, summary: 'Log in with a username and password', description: loginLimits, body: LoginBody, response: { 200: TokenAnswer } } },
    async (request) => {
      // While the hash queue is full a login would be refused anyway: 503 at once, before any limit bookkeeping.
      if (loginGate.full) throw loginGate.refusal()
      return passwordLogin(request.ip, request.body.username, request.body.password)
    },
  )

  app.post(
    '/wechat-login',
    {
      schema: { tags, summary: 'Log in with a mini-program code', description: loginLimits, body: WechatLoginBody, response: { 200: TokenAnswer } },
      preValidation: async () => {
        if (!config.wechat) throw new AppError('not_configured', 'Mini-program login is not configured')
      },
    },
    async (request) => {
      await limits.address(request.ip)
      const { openid } = await exchangeWechatCode(config.wechat!, request.body.code, deps.wechatTimeoutMs)
      const user = await users.upsertWechatUser(openid, request.body.profile ?? {})
      return { success: true, ...(await tokens.sign(user)), user }
    },
  )

  app.post(
    '/refresh',
    {
      schema: {
        tags,
        summary: 'A new token of the same session',
        description: 'Refused (401) once the session’s first login is CLOUD_JWT_MAX_SESSION_HOURS old; no token outlives its session.',
        security: [{ bearer: [] }],
        response: { 200: TokenAnswer },
      },
      preHandler: authenticator.requireUser,
    },
    async (request) => {
      const user = request.user!
      return { success: true, ...(await tokens.sign(user, tokens.refreshable(request.tokenClaims!))), user }
    },
  )

  app.post(
    '/logout',
    {
      schema: {
        tags,
        summary: 'End the session of this token',
        description: 'Ends the token sent and every token refreshed from the same login, on every instance at once.',
        security: [{ bearer: [] }],
        response: { 200: LogoutAnswer },
      },
      preHandler: authenticator.requireUser,
    },
    async (request) => {
      const claims = request.tokenClaims!
      await sessions.revoke(claims.sid, tokens.sessionEndMs(claims))
      return { success: true as const }
    },
  )
}
