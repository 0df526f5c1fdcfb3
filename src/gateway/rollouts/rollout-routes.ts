import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { RolloutRepository } from './rollout-repository.js'
import {
  CreateRolloutBody,
  RolloutAnswer,
  RolloutDetail,
  RolloutIdParams,
  RolloutList,
  RolloutListQuery,
  RolloutMachinesQuery,
} from './rollout-schemas.js'
import type { RolloutAction, RolloutService } from './rollout-service.js'

const BASE = '/api/v1/admin/firmware/slave/rollouts'
const ACTIONS: readonly RolloutAction[] = ['pause', 'resume', 'abort']

/** Rollouts for administrators (contract §14); the admin prefix guard checks the role. */
export const rolloutRoutes: FastifyPluginAsyncTypebox<{ service: RolloutService; repo: RolloutRepository }> = async (app, { service, repo }) => {
  const tags = ['firmware']
  const security = [{ bearer: [] }]

  app.post(BASE, { schema: { tags, security, summary: 'Start a staged rollout of a release', body: CreateRolloutBody, response: { 201: RolloutAnswer } } }, async (request, reply) => {
    const rollout = await service.create(request.body, request.user!.username)
    return reply.status(201).send({ success: true, rollout })
  })

  app.get(BASE, { schema: { tags, security, summary: 'Rollouts, newest first', querystring: RolloutListQuery, response: { 200: RolloutList } } }, async (request) => {
    return { success: true, ...(await service.list(request.query.limit ?? 100, request.query.before)) }
  })

  app.get(
    `${BASE}/:rollout_id`,
    { schema: { tags, security, summary: 'A rollout and its machines in stage order', params: RolloutIdParams, querystring: RolloutMachinesQuery, response: { 200: RolloutDetail } } },
    async (request) => {
      const rollout = await service.get(request.params.rollout_id)
      const { rows, next_after } = await repo.machines(rollout.rollout_id, request.query.limit ?? 100, request.query.after)
      const devices = rows.map((r) => ({
        device_id: r.device_id,
        stage: Number(r.stage),
        state: r.state,
        progress: r.progress === null ? null : Number(r.progress),
        error: r.error,
        updated_at: Number(r.updated_at),
      }))
      return { success: true, rollout, devices, ...(next_after === undefined ? {} : { next_after }) }
    },
  )

  for (const action of ACTIONS) {
    app.post(
      `${BASE}/:rollout_id/${action}`,
      { schema: { tags, security, summary: `${action[0]!.toUpperCase()}${action.slice(1)} a rollout`, params: RolloutIdParams, response: { 200: RolloutAnswer } } },
      async (request) => ({ success: true, rollout: await service.act(request.params.rollout_id, action, request.user!.username) }),
    )
  }
}
