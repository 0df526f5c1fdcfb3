import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { AppError } from '../errors.js'
import type { AppDeps } from '../app-deps.js'
import { LoginBody, LogoutAnswer, TokenAnswer, WechatLoginBody } from './auth-schemas.js'
import { LoginLimits } from './login-limits.js'
import { exchangeWechatCode } from './wechat-client.js'

/** POST /api/v1/auth/login, /wechat-login, /refresh, /logout (contract §3, §17). */
export const authRoutes: FastifyPluginAsyncTypebox<{ deps: AppDeps }> = async (app, { deps }) => {
  const { users, tokens, authenticator, sessions, config } = deps
  const limits = new LoginLimits(deps.storage, deps.loginThrottle)
  const tags = ['auth']

  app.post('/login', { schema: { tags, body: LoginBody, response: { 200: TokenAnswer } } }, async (request) => {
    const { username, password } = request.body
    const attempt = await limits.password(request.ip, username)
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
  })

  app.post(
    '/wechat-login',
    {
      schema: { tags, body: WechatLoginBody, response: { 200: TokenAnswer } },
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
    { schema: { tags, security: [{ bearer: [] }], response: { 200: TokenAnswer } }, preHandler: authenticator.userHook },
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
        summary: 'Ends the session of the token sent (it and every token refreshed from the same login), on every instance',
        security: [{ bearer: [] }],
        response: { 200: LogoutAnswer },
      },
      preHandler: authenticator.userHook,
    },
    async (request) => {
      const claims = request.tokenClaims!
      await sessions.revoke(claims.sid, tokens.sessionEndMs(claims))
      return { success: true as const }
    },
  )
}
