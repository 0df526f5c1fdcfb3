import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { throttleKey } from '../../auth/login-throttle.js'
import { AppError } from '../../errors.js'
import { isPlainObject } from '@fleetgate/device-agent/lib'
import { badDeviceResponse, deviceError, deviceMessage } from '../forwarding/device-answers.js'
import { requestUser, type GatewayContext } from '../gateway-context.js'
import { DeviceLoginAnswer, DeviceLoginBody, DeviceParams } from './device-schemas.js'
import { bindingEvent } from './binding-event.js'

const ROUTE = 'POST /api/v1/devices/:device_id/auth/login'

/**
 * POST /api/v1/devices/{device_id}/auth/login: the device checks the credentials (forwarded
 * as POST /auth/login); when it accepts them the caller is bound to the device.
 */
export const deviceLoginRoute: FastifyPluginAsyncTypebox<{ ctx: GatewayContext }> = async (app, { ctx }) => {
  const { client, bindings, deviceLoginThrottle: throttle } = ctx

  app.post(
    '/api/v1/devices/:device_id/auth/login',
    {
      onRequest: ctx.deps.authenticator.userHook,
      schema: {
        tags: ['devices'],
        security: [{ bearer: [] }],
        params: DeviceParams,
        body: DeviceLoginBody,
        response: { 200: DeviceLoginAnswer },
      },
    },
    async (request, reply) => {
      const user = request.user!
      const deviceId = request.params.device_id
      const { username, password } = request.body
      const key = throttleKey(request.ip, username)
      await throttle.claim(key, 'Too many failed device logins; try again later')
      const call = { method: 'POST' as const, path: '/auth/login', query: {}, body: { username, password }, user: requestUser(user) }
      // Only the device's verdict on the credentials counts: any other outcome gives the attempt back.
      const answer = await client.call(deviceId, call, ROUTE).catch(async (err: unknown) => {
        await throttle.release(key)
        throw err
      })
      if (answer.status === 401 || answer.status === 403) throw new AppError('device_auth_failed', deviceMessage(answer), {}, answer.status)
      const data = answer.data
      if (answer.status >= 400) {
        await throttle.release(key)
        throw deviceError(answer)
      }
      if (answer.status < 200 || answer.status >= 300 || !isPlainObject(data) || !isPlainObject(data.user)) {
        await throttle.release(key)
        throw badDeviceResponse('Device accepted the login without a user object')
      }
      await throttle.succeed(key)
      if (await bindings.bind(user, deviceId)) ctx.deps.events.publish(bindingEvent(user.username, deviceId, true))
      return { success: true, device_id: deviceId, user: data.user }
    },
  )
}
