import { infiniteQueryOptions, keepPreviousData, queryOptions } from '@tanstack/react-query'
import { api, ok } from '../../../api/api'
import { productionKeys } from '../../../api/query-keys'
import { windowOf, type RangeId } from './ranges'

/** Group by machine, or by the value of one label key (§16 `group_by`). */
export type GroupBy = { kind: 'device' } | { kind: 'label'; key: string }

export const groupByParam = (groupBy: GroupBy) => (groupBy.kind === 'device' ? 'device' : `label:${groupBy.key}`)

/** Figures change as machines report: read again every minute while shown. */
const REFRESH_MS = 60_000

/** `GET /api/v1/production`: the caller's machines grouped, over the range ending now. */
export const fleetProductionQuery = (groupBy: GroupBy, range: RangeId) =>
  queryOptions({
    queryKey: productionKeys.fleet(groupByParam(groupBy), range),
    queryFn: ({ signal }) => ok(api.GET('/api/v1/production', { params: { query: { ...windowOf(range), group_by: groupByParam(groupBy) } }, signal })),
    refetchInterval: REFRESH_MS,
    placeholderData: keepPreviousData,
  })

/** `GET /api/v1/devices/{id}/production`: one machine's figures, feeders worst first. */
export const machineProductionQuery = (id: string, range: RangeId) =>
  queryOptions({
    queryKey: productionKeys.figures(id, range),
    queryFn: ({ signal }) => ok(api.GET('/api/v1/devices/{device_id}/production', { params: { path: { device_id: id }, query: windowOf(range) }, signal })),
    refetchInterval: REFRESH_MS,
    placeholderData: keepPreviousData,
  })

/** `GET /api/v1/devices/{id}/production/series?bucket=hour`: the range hour by hour (30 days: 720 buckets). */
export const productionSeriesQuery = (id: string, range: RangeId) =>
  queryOptions({
    queryKey: productionKeys.series(id, range),
    queryFn: ({ signal }) =>
      ok(
        api.GET('/api/v1/devices/{device_id}/production/series', {
          params: { path: { device_id: id }, query: { ...windowOf(range, Date.now(), true), bucket: 'hour' } },
          signal,
        }),
      ),
    refetchInterval: REFRESH_MS,
    placeholderData: keepPreviousData,
  })

export const JOBS_PAGE = 20

/** `GET /api/v1/devices/{id}/production/jobs`: newest first, a page at a time. */
export const jobsQuery = (id: string) =>
  infiniteQueryOptions({
    queryKey: productionKeys.jobs(id),
    queryFn: ({ pageParam, signal }) =>
      ok(
        api.GET('/api/v1/devices/{device_id}/production/jobs', {
          params: { path: { device_id: id }, query: { limit: JOBS_PAGE, ...(pageParam ? { after: pageParam } : {}) } },
          signal,
        }),
      ),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.next_after ?? undefined,
    refetchInterval: REFRESH_MS,
  })
