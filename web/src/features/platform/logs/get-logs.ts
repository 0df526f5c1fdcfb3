import { infiniteQueryOptions } from '@tanstack/react-query'
import { apiFetch } from '../../../api/api-client'
import { platformKeys } from '../../../api/query-keys'
import type { LogList } from '../platform-types'

export const LOGS_PAGE_SIZE = 50
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const

const fetchLogs = (params: Record<string, string>, before: number | null, signal: AbortSignal) => {
  const query = new URLSearchParams({ ...params, limit: String(LOGS_PAGE_SIZE) })
  if (before !== null) query.set('before', String(before))
  return apiFetch<LogList>(`/api/admin/logs?${query}`, { signal })
}

/** A device's logs, newest first, paged with the API's `before` cursor; level '' means every level. */
export const deviceLogsQuery = (id: string, level: string) =>
  infiniteQueryOptions({
    queryKey: platformKeys.deviceLogs(id, level),
    queryFn: ({ pageParam, signal }) => fetchLogs({ source: 'device', device_id: id, ...(level ? { level } : {}) }, pageParam, signal),
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
