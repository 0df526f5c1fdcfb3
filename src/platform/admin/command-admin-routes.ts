import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { badRequest } from '../../errors.js'
import { isHidAction, validateCommand } from '../commands/command-actions.js'
import { toCommandRecord } from '../commands/command-record.js'
import { unknownDevice } from '../device-api/device-auth.js'
import { findDevice, setExpression } from '../devices/device-store.js'
import { recordOperation } from '../logs/operation-log.js'
import { ADMIN_SECURITY, ADMIN_TAGS, DeviceIdParams } from '../platform-schemas.js'
import type { PlatformServices } from '../platform-services.js'
import { CommandListQuery } from '../commands/command-schemas.js'
import { CommandAnswer, CommandBody, CommandClearBody, CommandListAnswer, DeletedAnswer, ExpressionBody } from './console-schemas.js'
import { actorOf } from './console-auth.js'

/** Queue commands (any action, expression, HID), list and clear the queue. */
export const commandAdminRoutes: FastifyPluginAsyncTypebox<{ services: PlatformServices }> = async (app, { services }) => {
  const { db, commands } = services
  const schema = { tags: ADMIN_TAGS, security: ADMIN_SECURITY }
  const queueSchema = { ...schema, params: DeviceIdParams, response: { 201: CommandAnswer } }

  /** Validates, queues and records the command; an expression also becomes the device's current one. */
  const queue = async (request: FastifyRequest, deviceId: string, action: string, params: Record<string, unknown> | undefined) => {
    const command = validateCommand(action, params)
    if (!(await findDevice(db, deviceId))) throw unknownDevice(deviceId)
    const now = Date.now()
    const row = await db.transaction().execute(async (tx) => {
      const queued = await commands.enqueue(tx, deviceId, command.action, command.params)
      if (command.action === 'expression') await setExpression(tx, deviceId, command.params.expression as string)
      const message = `queued ${command.action} #${queued.id} for ${deviceId} ${JSON.stringify(command.params)}`
      await recordOperation(tx, { actor: actorOf(request), action: 'command.create', device_id: deviceId, message }, now)
      return queued
    })
    commands.announce([row], now)
    return { success: true, command: toCommandRecord(row) }
  }

  app.post('/api/admin/device/:device_id/command', { schema: { ...queueSchema, body: CommandBody } }, async (request, reply) => {
    const { action, params } = request.body
    return reply.status(201).send(await queue(request, request.params.device_id, action, params))
  })

  app.post('/api/admin/device/:device_id/expression', { schema: { ...queueSchema, body: ExpressionBody } }, async (request, reply) => {
    const { expression } = request.body
    return reply.status(201).send(await queue(request, request.params.device_id, 'expression', { expression }))
  })

  app.post('/api/admin/device/:device_id/hid', { schema: { ...queueSchema, body: CommandBody } }, async (request, reply) => {
    const { action, params } = request.body
    if (!isHidAction(action)) throw badRequest(`Not an HID action: ${JSON.stringify(action)}`)
    return reply.status(201).send(await queue(request, request.params.device_id, action, params))
  })

  app.get('/api/admin/commands', { schema: { ...schema, querystring: CommandListQuery, response: { 200: CommandListAnswer } } }, async (request) => {
    const { device_id, status, limit = 100, before } = request.query
    await commands.sweep()
    const { rows, next_before } = await commands.list({ device_id, status, limit, before })
    return { success: true, commands: rows.map(toCommandRecord), ...(next_before ? { next_before } : {}) }
  })

  app.post('/api/admin/commands/clear', { schema: { ...schema, body: CommandClearBody, response: { 200: DeletedAnswer } } }, async (request) => {
    const filter = request.body ?? {}
    const deleted = await db.transaction().execute(async (tx) => {
      const n = await commands.clear(tx, filter)
      const what = `${filter.all ? 'all' : 'queued'} commands${filter.device_id ? ` of ${filter.device_id}` : ''}`
      await recordOperation(tx, { actor: actorOf(request), action: 'commands.clear', device_id: filter.device_id ?? null, message: `cleared ${n} ${what}` })
      return n
    })
    return { success: true, deleted }
  })
}
