import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { Static } from '@sinclair/typebox'
import { isAdmin } from '../../auth/authenticator.js'
import type { AuthUser } from '../../auth/user-directory.js'
import type { GatewayContext } from '../gateway-context.js'
import type { SelectorConditions } from '../labels/selector-conditions.js'
import { connectionRecord, deviceRecords, liveRecord } from './device-records.js'
import type { DevicePageQuery as DevicePageFilter } from './device-repository.js'
import {
  ConnectionAnswer,
  DeviceAnswer,
  DeviceList,
  DeviceListQuery,
  DevicePageQuery,
  DeviceParams,
  DiscoverList,
  MinimalDeviceRecord,
  StatusAnswer,
} from './device-schemas.js'

/** Contract §5: device lists default to 1000 (other lists to 100). */
const DEFAULT_LIMIT = 1000

/** Pages of linked devices whose holders are asked about at once (a page is one round trip per holding instance). */
const LIVE_PAGES_AT_ONCE = 8

/**
 * Devices matching `filter`, and how many of them are alive. Without a user's bindings or a
 * selector to match, each instance counts its own alive links (one question per instance, however
 * large the fleet); otherwise the linked devices matching are asked about a page at a time,
 * several pages at once.
 */
async function countDevices(devices: GatewayContext['devices'], bus: GatewayContext['bus'], filter: Omit<DevicePageFilter, 'limit' | 'after' | 'linkedOnly'>) {
  if (filter.boundTo === undefined && filter.condition === undefined) {
    const [total, holders] = await Promise.all([devices.count(filter), devices.liveInstances()])
    return { total, online: await bus.aliveCount(filter.prefix, holders) }
  }
  // The count and the pages of linked machines are separate reads: on PostgreSQL they run at once.
  const counting = devices.count(filter)
  counting.catch(() => undefined)
  let online = 0
  let failure: unknown
  const asking = new Set<Promise<void>>()
  let after: string | undefined
  for (;;) {
    const page = await devices.page({ ...filter, linkedOnly: true, limit: 1000, after })
    if (page.rows.length === 0) break
    const ask: Promise<void> = bus.live(page.rows).then(
      (states) => {
        for (const state of states.values()) if (state.alive) online += 1
      },
      (err: unknown) => void (failure ??= err),
    )
    asking.add(ask)
    void ask.then(() => asking.delete(ask))
    if (asking.size >= LIVE_PAGES_AT_ONCE) await Promise.race(asking)
    if (!page.more) break
    after = page.rows[page.rows.length - 1]!.device_id
  }
  await Promise.all(asking)
  if (failure !== undefined) throw failure
  return { total: await counting, online }
}

/** GET /api/v1/devices, /discover, /{device_id}, /status, /connection (seed §4.2). */
export const deviceRoutes: FastifyPluginAsyncTypebox<{ ctx: GatewayContext; selectors: SelectorConditions }> = async (app, { ctx, selectors }) => {
  const { devices, bus, access } = ctx
  const common = { onRequest: ctx.deps.authenticator.userHook }
  const tags = ['devices']
  const security = [{ bearer: [] }]

  app.get('/api/v1/devices', { ...common, schema: { tags, security, querystring: DevicePageQuery, response: { 200: DeviceList } } }, async (request) => {
    const user = request.user!
    const { limit = DEFAULT_LIMIT, after, prefix, counts, selector } = request.query
    const condition = selector !== undefined && selector.trim() !== '' ? selectors.condition(selector) : undefined
    const filter = { prefix, boundTo: isAdmin(user) ? undefined : user.username, condition }
    const [page, tally] = await Promise.all([devices.page({ ...filter, limit, after }), counts ? countDevices(devices, bus, filter) : undefined])
    const records = await deviceRecords(bus, page.rows, ctx.labels)
    return {
      success: true,
      devices: records,
      ...(page.more ? { next_after: records[records.length - 1]!.device_id } : {}),
      ...(tally ? { counts: tally } : {}),
    }
  })

  app.get(
    '/api/v1/devices/discover',
    { ...common, schema: { tags, security, querystring: DeviceListQuery, response: { 200: DiscoverList } } },
    async (request) => {
      const { limit = DEFAULT_LIMIT } = request.query
      const found: Static<typeof MinimalDeviceRecord>[] = []
      let after = request.query.after
      let more = true
      // Only linked devices are candidates; live state decides which are alive.
      while (more && found.length < limit) {
        const page = await devices.page({ limit: 1000, after, linkedOnly: true })
        const live = page.rows.length > 0 ? await bus.live(page.rows) : new Map()
        more = page.more
        for (const [i, row] of page.rows.entries()) {
          after = row.device_id
          const state = live.get(row.device_id)
          if (!state?.alive) continue
          found.push({ device_id: row.device_id, hostname: state.hostname, version: state.version, alive: true })
          if (found.length === limit) {
            more ||= i < page.rows.length - 1
            break
          }
        }
      }
      return { success: true, devices: found, ...(more && found.length > 0 ? { next_after: found[found.length - 1]!.device_id } : {}) }
    },
  )

  const visibleRecord = async (user: AuthUser, deviceId: string) => liveRecord(bus, await access.visibleRow(user, deviceId), ctx.labels)

  app.get('/api/v1/devices/:device_id', { ...common, schema: { tags, security, params: DeviceParams, response: { 200: DeviceAnswer } } }, async (request) => ({
    success: true,
    device: await visibleRecord(request.user!, request.params.device_id),
  }))

  app.get(
    '/api/v1/devices/:device_id/status',
    { ...common, schema: { tags, security, params: DeviceParams, response: { 200: StatusAnswer } } },
    async (request) => ({ success: true, status: (await visibleRecord(request.user!, request.params.device_id)).last_status }),
  )

  app.get(
    '/api/v1/devices/:device_id/connection',
    { ...common, schema: { tags, security, params: DeviceParams, response: { 200: ConnectionAnswer } } },
    async (request) => ({ success: true, ...connectionRecord(await visibleRecord(request.user!, request.params.device_id)) }),
  )
}
