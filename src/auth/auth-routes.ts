import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { AppError } from '../errors.js'
import type { AppDeps } from '../app-deps.js'
import { LoginBody, TokenAnswer, WechatLoginBody } from './auth-schemas.js'
import { throttleKey } from './login-throttle.js'
import { exchangeWechatCode } from './wechat-client.js'

/** POST /api/v1/auth/login, /wechat-login, /refresh (contract §3). */
export const authRoutes: FastifyPluginAsyncTypebox<{ deps: AppDeps }> = async (app, { deps }) => {
  const { users, tokens, authenticator, loginThrottle, config } = deps
  const tags = ['auth']

  app.post('/login', { schema: { tags, body: LoginBody, response: { 200: TokenAnswer } } }, async (request) => {
    const { username, password } = request.body
    const key = throttleKey(request.ip, username)
    await loginThrottle.claim(key, 'Too many failed logins; try again later')
    const user = await users.authenticate(username, password)
    if (!user) {
      throw new AppError('unauthorized', 'Wrong username or password')
    }
    await loginThrottle.succeed(key)
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
      return { success: true, ...(await tokens.sign(user)), user }
    },
  )
}
