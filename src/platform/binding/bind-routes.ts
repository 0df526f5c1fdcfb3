import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { AppError, forbidden, unauthorized } from '../../errors.js'
import { hasConsoleToken } from '../device-api/device-auth.js'
import { SharedRateLimit } from '../../http/shared-rate-limit.js'
import { clientAddressKey } from '../../auth/client-address.js'
import { recordOperation } from '../logs/operation-log.js'
import { DEVICE_SECURITY, DEVICE_TAGS, DeviceIdParams } from '../platform-schemas.js'
import type { PlatformServices } from '../platform-services.js'
import { BindCodeAnswer, BindStatusAnswer, BindVerifyAnswer, BindVerifyBody } from './bind-schemas.js'
import { bindStatus, issueBindCode, redeemBindCode } from './bind-store.js'

/** Contract §7: 10 verify attempts per minute per client address, counted across instances. */
const VERIFY_LIMIT = 10
const VERIFY_WINDOW_MS = 60_000
const VERIFY_CREDENTIALS = 'A gateway token, or the console token with user_id, is required'

/** Binding: the device shows a code, a user (or the console for a user) redeems it. */
export const bindRoutes: FastifyPluginAsyncTypebox<{ services: PlatformServices }> = async (app, { services }) => {
  const { access, db, deps } = services
  const device = { tags: DEVICE_TAGS, security: DEVICE_SECURITY, params: DeviceIdParams }
  const verifyLimit = new SharedRateLimit(db, 'bind-verify', VERIFY_LIMIT, VERIFY_WINDOW_MS, deps.storage.clock)

  app.get('/v1/device/:device_id/bind/code', { schema: { ...device, response: { 200: BindCodeAnswer } } }, async (request) => {
    const { device_id } = request.params
    await access.require(request, device_id)
    return { success: true, ...(await issueBindCode(db, device_id, Date.now())) }
  })

  app.get('/v1/device/:device_id/bind/status', { schema: { ...device, response: { 200: BindStatusAnswer } } }, async (request) => {
    const { device_id } = request.params
    await access.require(request, device_id)
    return { success: true, ...(await bindStatus(db, device_id)) }
  })

  /** The user the code binds to, and who asked; 401/403 before the code is even looked at. */
  const bindingUser = async (request: FastifyRequest, requested: string | undefined): Promise<{ userId: string; actor: string | null }> => {
    const user = await deps.authenticator.identify(request)
    const byConsole = hasConsoleToken(request)
    if (requested === undefined) {
      if (user) return { userId: user.id, actor: null }
      if (byConsole) throw new AppError('bad_request', 'user_id is required with the console token')
      throw unauthorized(VERIFY_CREDENTIALS)
    }
    if (byConsole) return { userId: requested, actor: 'console' }
    if (user?.role === 'admin') return { userId: requested, actor: user.username }
    if (user && user.id === requested) return { userId: requested, actor: null }
    if (user) throw forbidden('Only the console or an administrator binds a device to another user')
    throw unauthorized('A gateway token, or the console token with user_id, is required')
  }

  app.post(
    '/v1/bind/verify',
    {
      // Every authenticated try counts, well-formed or not (onRequest, before the body). An anonymous
      // one is refused first and writes nothing: it could never redeem a code, and counting it would
      // give anyone a database write per request.
      onRequest: async (request) => {
        if (!hasConsoleToken(request) && !(await deps.authenticator.identify(request))) throw unauthorized(VERIFY_CREDENTIALS)
        await verifyLimit.hit(clientAddressKey(request.ip), 'Too many binding attempts from this address; retry later')
      },
      schema: {
        tags: DEVICE_TAGS,
        security: [{ bearer: [] }, { consoleToken: [] }],
        body: BindVerifyBody,
        response: { 200: BindVerifyAnswer },
      },
    },
    async (request) => {
      const { userId, actor } = await bindingUser(request, request.body.user_id)
      const binding = await redeemBindCode(db, request.body.code, userId, Date.now(), async (tx, bound) => {
        if (!actor) return
        const message = `bound ${bound.device_id} to user ${userId}`
        await recordOperation(tx, { actor, action: 'device.bind', device_id: bound.device_id, message }, bound.bound_at)
      })
      if (!binding) throw new AppError('invalid_code', 'Wrong or expired binding code')
      return { success: true, ...binding }
    },
  )
}
