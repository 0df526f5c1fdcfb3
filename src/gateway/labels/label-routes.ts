import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { isAdmin } from '../../auth/authenticator.js'
import { badRequest, notFound } from '../../errors.js'
import { writeAudit } from '../../storage/audit-repository.js'
import { liveRecord } from '../devices/device-records.js'
import { DeviceParams } from '../devices/device-schemas.js'
import type { GatewayContext } from '../gateway-context.js'
import { labelChangesProblem, labelKeyProblem, labelProblemMessage, labelsProblem, type LabelProblem } from './label-rules.js'
import { BulkLabelsAnswer, BulkLabelsBody, LabelKeysAnswer, LabelsAnswer, LabelsMergeBody, LabelsReplaceBody } from './label-schemas.js'
import type { SelectorConditions } from './selector-conditions.js'

/** A bulk change by ids may name up to 100,000 machines: more than the 1 MiB of other JSON bodies. */
const BULK_BODY_LIMIT = 8 * 1024 * 1024

/** Labels of gateway machines (§15): reading their keys, and administrators changing them. */
export const labelRoutes: FastifyPluginAsyncTypebox<{ ctx: GatewayContext; selectors: SelectorConditions }> = async (app, { ctx, selectors }) => {
  const { labels, bus, devices } = ctx
  const tags = ['labels']
  const security = [{ bearer: [] }]

  app.get(
    '/api/v1/devices/labels',
    { onRequest: ctx.deps.authenticator.userHook, schema: { tags, security, response: { 200: LabelKeysAnswer } } },
    async (request) => {
      const user = request.user!
      return { success: true, keys: await labels.keys(isAdmin(user) ? undefined : user.username) }
    },
  )

  const answer = async (deviceId: string) => {
    const row = await devices.find(deviceId)
    if (!row) throw notFound(`No device ${deviceId}`)
    return { success: true, device: await liveRecord(bus, row, labels) }
  }

  app.put(
    '/api/v1/admin/devices/:device_id/labels',
    { schema: { tags, security, params: DeviceParams, body: LabelsReplaceBody, response: { 200: LabelsAnswer } } },
    async (request) => {
      const { device_id } = request.params
      refuse(labelsProblem(request.body.labels))
      const stored = await labels.replace(device_id, request.body.labels, (tx) =>
        writeAudit(tx, { actor: request.user!.username, action: 'labels', outcome: 'replaced', device_id, detail: { labels: request.body.labels } }),
      )
      if (!stored) throw notFound(`No device ${device_id}`)
      return answer(device_id)
    },
  )

  app.patch(
    '/api/v1/admin/devices/:device_id/labels',
    { schema: { tags, security, params: DeviceParams, body: LabelsMergeBody, response: { 200: LabelsAnswer } } },
    async (request) => {
      const { device_id } = request.params
      refuse(labelChangesProblem(request.body.labels))
      const stored = await labels.merge(device_id, request.body.labels, (tx) =>
        writeAudit(tx, { actor: request.user!.username, action: 'labels', outcome: 'merged', device_id, detail: { labels: request.body.labels } }),
      )
      if (!stored) throw notFound(`No device ${device_id}`)
      return answer(device_id)
    },
  )

  app.post(
    '/api/v1/admin/devices/labels',
    { bodyLimit: BULK_BODY_LIMIT, schema: { tags, security, body: BulkLabelsBody, response: { 200: BulkLabelsAnswer } } },
    async (request) => {
      const { selector, devices: ids, set = {}, remove = [] } = request.body
      if ((selector === undefined) === (ids === undefined)) throw badRequest('Give either selector or devices (a list of ids), not both and not neither')
      refuse(labelChangesProblem(set))
      for (const key of remove) refuse(labelKeyProblem(key))
      if (Object.keys(set).length === 0 && remove.length === 0) throw badRequest('Nothing to change: give set, remove or both')
      const both = remove.find((key) => Object.hasOwn(set, key))
      if (both !== undefined) throw badRequest(`Label ${both} is both set and removed`, { key: both })
      const target = selector !== undefined ? { condition: selectors.condition(selector) } : { ids: [...new Set(ids)] }
      const result = await labels.bulk(target, { set, remove }, (tx, { matched, changed }) =>
        writeAudit(tx, {
          actor: request.user!.username,
          action: 'labels',
          outcome: 'bulk',
          detail: { ...(selector !== undefined ? { selector } : { devices: ids!.length }), set, remove, matched, changed },
        }),
      )
      return { success: true, ...result }
    },
  )
}

function refuse(problem: LabelProblem | undefined): void {
  if (problem) throw badRequest(labelProblemMessage(problem), 'key' in problem ? { key: problem.key } : {})
}
