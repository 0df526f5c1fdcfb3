import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { Db } from '../../storage/storage.js'
import type { LabelChanges, Labels } from './label-repository.js'
import { isAdmin } from '../../auth/authenticator.js'
import { badRequest, notFound } from '../../errors.js'
import { writeAudit } from '../../storage/audit-repository.js'
import { deviceRecord } from '../devices/device-records.js'
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

  /** One machine's change, committed with its audit record; the answer is its record with the labels stored. */
  const changeOne = async (
    request: { user: { username: string } | null; params: { device_id: string }; body: { labels: LabelChanges } },
    outcome: 'replaced' | 'merged',
    change: (deviceId: string, audit: (tx: Db) => Promise<void>) => Promise<Labels | undefined>,
  ) => {
    const { device_id } = request.params
    const audit = (tx: Db) => writeAudit(tx, { actor: request.user!.username, action: 'labels', outcome, device_id, detail: { labels: request.body.labels } })
    const stored = await change(device_id, audit)
    const row = stored && (await devices.find(device_id))
    if (!row) throw notFound(`No device ${device_id}`)
    return { success: true, device: deviceRecord(row, (await bus.live([row])).get(device_id), stored) }
  }

  app.put(
    '/api/v1/admin/devices/:device_id/labels',
    { schema: { tags, security, params: DeviceParams, body: LabelsReplaceBody, response: { 200: LabelsAnswer } } },
    async (request) => {
      refuse(labelsProblem(request.body.labels))
      return changeOne(request, 'replaced', (id, audit) => labels.replace(id, request.body.labels, audit))
    },
  )

  app.patch(
    '/api/v1/admin/devices/:device_id/labels',
    { schema: { tags, security, params: DeviceParams, body: LabelsMergeBody, response: { 200: LabelsAnswer } } },
    async (request) => {
      refuse(labelChangesProblem(request.body.labels))
      return changeOne(request, 'merged', (id, audit) => labels.merge(id, request.body.labels, audit))
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
