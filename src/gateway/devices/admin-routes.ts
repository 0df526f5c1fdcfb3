import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { notFound } from '../../errors.js'
import { CLOSE_CODES } from '@fleetgate/device-agent/protocol'
import { listAudit, writeAudit } from '../../storage/audit-repository.js'
import type { GatewayContext } from '../gateway-context.js'
import { bindingEvent } from './binding-event.js'
import { AuditList, AuditQuery, BindingDeleted, BindingList, BindingListQuery, BindingParams, DeviceForgotten, KeyReset } from './admin-schemas.js'
import { DeviceParams } from './device-schemas.js'

const DEFAULT_LIMIT = 100

/** /api/v1/admin: bindings, forgetting devices, key resets and the audit log (administrators). */
export const adminRoutes: FastifyPluginAsyncTypebox<{ ctx: GatewayContext }> = async (app, { ctx }) => {
  const { bindings, devices, bus, bindingRemovals, deps } = ctx
  const db = deps.storage.db
  const tags = ['admin']
  const security = [{ bearer: [] }]

  app.get('/api/v1/admin/bindings', { schema: { tags, security, querystring: BindingListQuery, response: { 200: BindingList } } }, async (request) => {
    const page = await bindings.page({ ...request.query, limit: request.query.limit ?? DEFAULT_LIMIT })
    return { success: true, bindings: page.rows, ...(page.more ? { next_after: page.rows[page.rows.length - 1]!.id } : {}) }
  })

  app.delete(
    '/api/v1/admin/bindings/:username/:device_id',
    { schema: { tags, security, params: BindingParams, response: { 200: BindingDeleted } } },
    async (request) => {
      const { username, device_id } = request.params
      // The change and its audit record commit together: an outage between them cannot leave one without the other.
      const deleted = await bindings.unbind(username, device_id, (tx, deleted) =>
        writeAudit(tx, { actor: request.user!.username, action: 'binding.delete', outcome: deleted ? 'deleted' : 'not_found', device_id, detail: { username } }),
      )
      if (deleted) bindingRemovals.announce({ device_id, username })
      if (!deleted) throw notFound(`No binding of ${username} to ${device_id}`)
      deps.events.publish(bindingEvent(username, device_id, false))
      return { success: true, username, device_id, deleted: true }
    },
  )

  app.delete(
    '/api/v1/admin/devices/:device_id',
    { schema: { tags, security, params: DeviceParams, response: { 200: DeviceForgotten } } },
    async (request) => {
      const { device_id } = request.params
      const forgotten = await devices.forget(device_id, (tx, forgotten) =>
        writeAudit(tx, { actor: request.user!.username, action: 'device.forget', outcome: forgotten ? 'forgotten' : 'not_found', device_id }),
      )
      bindingRemovals.announce({ device_id })
      if (!forgotten) throw notFound(`No device ${device_id}`)
      for (const username of forgotten.unbound) deps.events.publish(bindingEvent(username, device_id, false))
      // A forgotten device must not stay linked; 4401 tells it its identity is no longer accepted.
      await bus.disconnect(device_id, CLOSE_CODES.unauthorized, 'device forgotten by an administrator').catch((err: unknown) => {
        request.log.warn({ err, device_id }, 'could not close the link of a forgotten device')
      })
      return { success: true, device_id, forgotten: true }
    },
  )

  app.delete(
    '/api/v1/admin/devices/:device_id/key',
    { schema: { tags, security, params: DeviceParams, response: { 200: KeyReset } } },
    async (request) => {
      const { device_id } = request.params
      const reset = await devices.resetKey(device_id, (tx, reset) =>
        writeAudit(tx, { actor: request.user!.username, action: 'device.key_reset', outcome: reset ? 'reset' : 'not_found', device_id }),
      )
      if (!reset) throw notFound(`No device ${device_id}`)
      // The link presented the old key: it ends with the key (4401), on whichever instance holds it (contract §17).
      await bus.disconnect(device_id, CLOSE_CODES.unauthorized, 'device key reset by an administrator').catch((err: unknown) => {
        request.log.warn({ err, device_id }, 'could not close the link of a device whose key was reset')
      })
      return { success: true, device_id, key_reset: true }
    },
  )

  app.get('/api/v1/admin/audit', { schema: { tags, security, querystring: AuditQuery, response: { 200: AuditList } } }, async (request) => {
    const { records, next_before } = await listAudit(db, { ...request.query, limit: request.query.limit ?? DEFAULT_LIMIT })
    return { success: true, records, ...(next_before !== undefined ? { next_before } : {}) }
  })
}
