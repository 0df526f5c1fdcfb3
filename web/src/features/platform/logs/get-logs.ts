import { infiniteQueryOptions } from '@tanstack/react-query'
import { api, ok } from '../../../api/api'
import { platformKeys } from '../../../api/query-keys'
import type { paths } from '../../../api/openapi'

export const LOGS_PAGE_SIZE = 50
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const

type LogsQuery = NonNullable<paths['/api/admin/logs']['get']['parameters']['query']>

const fetchLogs = (params: Omit<LogsQuery, 'limit' | 'before'>, before: number | null, signal: AbortSignal) =>
  ok(api.GET('/api/admin/logs', { params: { query: { ...params, limit: LOGS_PAGE_SIZE, ...(before !== null ? { before } : {}) } }, signal }))

/** A device's logs, newest first, paged with the API's `before` cursor; level '' means every level. */
export const deviceLogsQuery = (id: string, level: string) =>
  infiniteQueryOptions({
    queryKey: platformKeys.deviceLogs(id, level),
    queryFn: ({ pageParam, signal }) =>
      fetchLogs({ source: 'device', device_id: id, ...(level ? { level: level as NonNullable<LogsQuery['level']> } : {}) }, pageParam, signal),
    initialPageParam: null as number | null,
    getNextPageParam: (last) => last.next_before ?? null,
  })

/** The operation log (every admin write), newest first. */
export const operationLogQuery = () =>
  infiniteQueryOptions({
    queryKey: platformKeys.operationLog(),
    queryFn: ({ pageParam, signal }) => fetchLogs({ source: 'operation' }, pageParam, signal),
    initialPageParam: null as number | null,
    getNextPageParam: (last) => last.next_before ?? null,
  })
