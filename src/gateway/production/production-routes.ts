import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { SqlBool, Expression } from 'kysely'
import { isAdmin } from '../../auth/authenticator.js'
import { badRequest } from '../../errors.js'
import { nowSeconds } from '../../lib/time.js'
import { boundTo } from '../devices/binding-repository.js'
import { DeviceParams } from '../devices/device-schemas.js'
import type { GatewayContext } from '../gateway-context.js'
import type { SelectorConditions } from '../labels/selector-conditions.js'
import type { DevicesCondition } from '../labels/selector/selector-sql.js'
import { labelKeyProblem } from '../labels/label-rules.js'
import type { GroupBy, ProductionReader } from './production-reader.js'
import type { ProductionRepository } from './production-repository.js'
import { FleetAnswer, FleetQuery, JobsAnswer, JobsQuery, MachineProductionAnswer, SeriesAnswer, SeriesQuery, Window } from './production-schemas.js'
import { bucketCount, DAY, HOUR } from './window-plan.js'

/** The longest window a query may ask for (§16). */
export const MAX_WINDOW_DAYS = 400
/** The most buckets one series may have (§16). */
export const MAX_BUCKETS = 1000
const DEFAULT_WINDOW = DAY

/** `from`/`to` with their defaults (the last 24 h), checked: `from < to`, at most 400 days apart. */
export function windowOf(query: { from?: number; to?: number }, now: number): { from: number; to: number } {
  const to = query.to ?? now
  const from = query.from ?? to - DEFAULT_WINDOW
  if (!(from < to)) throw badRequest('from must be before to', { from, to })
  if (to - from > MAX_WINDOW_DAYS * DAY) throw badRequest(`The window may span at most ${MAX_WINDOW_DAYS} days`, { from, to })
  return { from, to }
}

function groupByOf(text: string | undefined): GroupBy {
  if (text === undefined || text === 'device') return { kind: 'device' }
  if (text.startsWith('label:')) {
    const key = text.slice('label:'.length)
    if (labelKeyProblem(key) === undefined) return { kind: 'label', key }
  }
  throw badRequest('group_by must be device or label:<key> with a valid label key', { group_by: text })
}

/** Production reporting (§16): one machine's figures, series and jobs, and the fleet's figures by group. */
export const productionRoutes: FastifyPluginAsyncTypebox<{ ctx: GatewayContext; selectors: SelectorConditions; reader: ProductionReader; repo: ProductionRepository }> = async (
  app,
  { ctx, selectors, reader, repo },
) => {
  const common = { onRequest: ctx.deps.authenticator.userHook }
  const tags = ['production']
  const security = [{ bearer: [] }]

  /** A machine the caller may see (else 404), with its rating. */
  const visible = async (user: NonNullable<Parameters<typeof ctx.access.visibleRow>[0]>, deviceId: string) => {
    const row = await ctx.access.visibleRow(user, deviceId)
    return row.rated_cph === null ? null : Number(row.rated_cph)
  }

  app.get(
    '/api/v1/devices/:device_id/production',
    { ...common, schema: { tags, security, summary: 'One machine’s production figures over a window', params: DeviceParams, querystring: Window, response: { 200: MachineProductionAnswer } } },
    async (request) => {
      const now = nowSeconds()
      const { from, to } = windowOf(request.query, now)
      const { device_id } = request.params
      const rated_cph = await visible(request.user!, device_id)
      const [figures, state] = await Promise.all([reader.machine(device_id, rated_cph, from, to, now), repo.currentState(device_id)])
      return { success: true, device_id, from, to, rated_cph, state: state ?? null, ...figures }
    },
  )

  app.get(
    '/api/v1/devices/:device_id/production/series',
    { ...common, schema: { tags, security, summary: 'One machine’s figures by hour or day', params: DeviceParams, querystring: SeriesQuery, response: { 200: SeriesAnswer } } },
    async (request) => {
      const now = nowSeconds()
      const { from, to } = windowOf(request.query, now)
      const bucket = request.query.bucket ?? 'hour'
      const seconds = bucket === 'hour' ? HOUR : DAY
      const count = bucketCount(from, to, seconds)
      if (count > MAX_BUCKETS) throw badRequest(`The series would have ${count} buckets; at most ${MAX_BUCKETS}`, { buckets: count })
      const rated = await visible(request.user!, request.params.device_id)
      return { success: true, bucket, buckets: await reader.series(request.params.device_id, rated, from, to, seconds, now) }
    },
  )

  app.get(
    '/api/v1/devices/:device_id/production/jobs',
    { ...common, schema: { tags, security, summary: 'One machine’s jobs, newest first', params: DeviceParams, querystring: JobsQuery, response: { 200: JobsAnswer } } },
    async (request) => {
      await visible(request.user!, request.params.device_id)
      const { rows, next_after } = await repo.jobs(request.params.device_id, request.query.limit ?? 100, request.query.after)
      return { success: true, jobs: rows, ...(next_after === undefined ? {} : { next_after }) }
    },
  )

  app.get(
    '/api/v1/production',
    { ...common, schema: { tags, security, summary: 'The caller’s machines’ figures, by machine or by label', querystring: FleetQuery, response: { 200: FleetAnswer } } },
    async (request) => {
      const now = nowSeconds()
      const { from, to } = windowOf(request.query, now)
      const groupBy = groupByOf(request.query.group_by)
      const user = request.user!
      const { selector } = request.query
      const conditions: DevicesCondition[] = []
      if (selector !== undefined && selector.trim() !== '') conditions.push(selectors.condition(selector))
      if (!isAdmin(user)) conditions.push(() => boundTo(user.username, 'devices.device_id') as Expression<SqlBool>)
      const where: DevicesCondition = (eb) => eb.and(conditions.map((c) => c(eb)))
      return { success: true, from, to, ...(await reader.fleet({ where }, groupBy, from, to, now)) }
    },
  )
}
