import { queryOptions } from '@tanstack/react-query'
import { apiFetch } from '../../../api/api-client'
import { platformKeys } from '../../../api/query-keys'
import type { PlatformDeviceList } from '../platform-types'

export const DEVICES_PAGE_SIZE = 100

/** One page of GET /api/admin/devices after the cursor `after` (null: the first page). */
export const devicesQuery = (after: string | null, limit = DEVICES_PAGE_SIZE) =>
  queryOptions({
    queryKey: platformKeys.devicePage(after),
    queryFn: ({ signal }) => {
      const params = new URLSearchParams({ limit: String(limit) })
      if (after) params.set('after', after)
      return apiFetch<PlatformDeviceList>(`/api/admin/devices?${params}`, { signal })
    },
  })
