import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type, type TSchema } from '@sinclair/typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { badRequest } from '../../errors.js'
import { Id, type RequestQuery } from '@fleetgate/device-agent/protocol'
import type { DeviceAnswer } from '../../link/bus/device-bus.js'
import { requestUser, type GatewayContext } from '../gateway-context.js'
import { isPlainObject } from '@fleetgate/device-agent/lib'
import { assertFinalStatus, badDeviceResponse, deviceError } from './device-answers.js'
import { FORWARDED_ENDPOINTS, type AnswerShape, type ForwardedEndpoint } from './forwarded-endpoints.js'

const DEVICE_PREFIX = '/api/v1/devices/:device_id'

const Camera = Type.Union([Type.Literal('up'), Type.Literal('down')], { description: 'Camera: up or down' })

const PATH_PARAMS: Record<string, TSchema> = {
  oid: Id('Order id'),
  cid: Id('Component id'),
  eid: Id('Extension id'),
  cam: Camera,
}

const Envelope = Type.Object({
  success: Type.Boolean({ description: 'status < 400' }),
  status: Type.Integer({ description: 'The device’s status, also the HTTP status' }),
  data: Type.Unknown({ description: 'The device’s answer' }),
})

const answerSchema = (shape: AnswerShape) =>
  shape.kind === 'envelope' ? Envelope : Type.Object({ success: Type.Boolean(), [shape.field]: Type.Unknown({ description: `data.${shape.field} of the device’s answer` }) })

const paramNames = (path: string) => [...path.matchAll(/:(\w+)/g)].map((m) => m[1]!)

function paramsSchema(endpoint: ForwardedEndpoint) {
  const properties: Record<string, TSchema> = { device_id: Id('Device id') }
  for (const name of paramNames(endpoint.path)) {
    const schema = PATH_PARAMS[name]
    if (!schema) throw new Error(`forwarded endpoint ${endpoint.path}: no schema for path parameter ${name}`)
    properties[name] = schema
  }
  return Type.Object(properties)
}

/** The device-side path with the request's ids in place of the pattern's parameters. */
const devicePath = (pattern: string, params: Record<string, string>) => pattern.replace(/:(\w+)/g, (_, name: string) => params[name]!)

async function absentBodyIsNull(request: FastifyRequest): Promise<void> {
  if (request.body === undefined) request.body = null
}

/** Registers each forwarded endpoint as its own route with its schemas (so /openapi.json lists it). */
export const forwardingRoutes: FastifyPluginAsyncTypebox<{ ctx: GatewayContext }> = async (app, { ctx }) => {
  const { access, client } = ctx
  for (const endpoint of FORWARDED_ENDPOINTS) {
    const url = `${DEVICE_PREFIX}${endpoint.path}`
    const label = `${endpoint.method} ${url}`
    const fixedPath = paramNames(endpoint.path).length === 0 ? endpoint.path : undefined
    const optionalBody = endpoint.body !== undefined && (endpoint.body as { nullable?: boolean }).nullable === true
    app.route({
      method: endpoint.method,
      url,
      exposeHeadRoute: false,
      ...(endpoint.bodyLimit ? { bodyLimit: endpoint.bodyLimit } : {}),
      onRequest: ctx.deps.authenticator.userHook,
      ...(optionalBody ? { preValidation: absentBodyIsNull } : {}),
      schema: {
        tags: [endpoint.tag],
        summary: endpoint.summary,
        description: `Forwarded to the device as ${endpoint.method} ${endpoint.path}.`,
        security: [{ bearer: [] }],
        params: paramsSchema(endpoint),
        ...(endpoint.body ? { body: endpoint.body } : {}),
        response: { '2xx': answerSchema(endpoint.answer) },
      },
      handler: async (request: FastifyRequest, reply: FastifyReply) => {
        const user = request.user!
        const params = request.params as Record<string, string>
        const deviceId = params.device_id!
        const problem = endpoint.check?.(request.body)
        if (problem) throw badRequest(problem)
        if (!access.knownVisible(user, deviceId)) await access.assertVisible(user, deviceId)
        const call = {
          method: endpoint.method,
          path: fixedPath ?? devicePath(endpoint.path, params),
          query: request.query as RequestQuery,
          body: request.body ?? null,
          user: requestUser(user),
        }
        const answer = await client.call(deviceId, call, label)
        return shapeAnswer(endpoint.answer, answer, reply)
      },
    })
  }
}

function shapeAnswer(shape: AnswerShape, answer: DeviceAnswer, reply: FastifyReply) {
  assertFinalStatus(answer)
  if (shape.kind === 'envelope') {
    reply.code(answer.status)
    return { success: answer.status < 400, status: answer.status, data: answer.data ?? null }
  }
  if (answer.status >= 400) throw deviceError(answer)
  const value = isPlainObject(answer.data) ? answer.data[shape.field] : undefined
  if (answer.status >= 300 || value === undefined) throw badDeviceResponse(`Device answer lacks data.${shape.field}`)
  reply.code(shape.status ?? 200)
  return { success: true, [shape.field]: value }
}
