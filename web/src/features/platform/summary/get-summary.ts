import { queryOptions } from '@tanstack/react-query'
import { apiFetch } from '../../../api/api-client'
import { platformKeys } from '../../../api/query-keys'
import type { PlatformSummary } from '../platform-types'

/** GET /api/admin/summary; §11 platform-device and command events invalidate it. */
export const summaryQuery = () =>
  queryOptions({
    queryKey: platformKeys.summary(),
    queryFn: ({ signal }) => apiFetch<PlatformSummary>('/api/admin/summary', { signal }),
  })
