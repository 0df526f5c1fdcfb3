import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { LogClearBody, LogList, LogQuery, type LogLevel, type LogSource } from '../logs/log-schemas.js'
import { clearLogs, listLogs } from '../logs/log-store.js'
import { recordOperation } from '../logs/operation-log.js'
import { ADMIN_SECURITY, ADMIN_TAGS } from '../platform-schemas.js'
import type { PlatformServices } from '../platform-services.js'
import { DeletedAnswer } from './console-schemas.js'
import { actorOf, requireConsole } from './console-auth.js'

/** GET /api/admin/logs (device and operation logs) and POST /api/admin/logs/clear. */
export const logAdminRoutes: FastifyPluginAsyncTypebox<{ services: PlatformServices }> = async (app, { services }) => {
  const { db } = services
  const common = { onRequest: requireConsole(services.deps) }
  const schema = { tags: ADMIN_TAGS, security: ADMIN_SECURITY }

  app.get('/api/admin/logs', { ...common, schema: { ...schema, querystring: LogQuery, response: { 200: LogList } } }, async (request) => {
    const { source, device_id, level, limit = 100, before } = request.query
    const { rows, next_before } = await listLogs(db, { source, device_id, level, limit, before })
    const logs = rows.map((r) => ({ ...r, source: r.source as LogSource, level: r.level as LogLevel }))
    return { success: true, logs, ...(next_before ? { next_before } : {}) }
  })

  app.post('/api/admin/logs/clear', { ...common, schema: { ...schema, body: LogClearBody, response: { 200: DeletedAnswer } } }, async (request) => {
    const filter = request.body ?? {}
    const deleted = await db.transaction().execute(async (tx) => {
      const n = await clearLogs(tx, filter)
      const what = [filter.source, 'logs', filter.device_id ? `of ${filter.device_id}` : ''].filter(Boolean).join(' ')
      await recordOperation(tx, { actor: actorOf(request), action: 'logs.clear', device_id: filter.device_id ?? null, message: `cleared ${n} ${what}` })
      return n
    })
    return { success: true, deleted }
  })
}
