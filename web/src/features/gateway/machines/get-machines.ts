import { queryOptions } from '@tanstack/react-query'
import { apiFetch } from '../../../api/api-client'
import { machineKeys } from '../../../api/query-keys'
import type { DeviceList } from '../../../api/types'

export const MACHINES_PAGE_SIZE = 100

/** One page of GET /api/v1/devices, after the cursor `after` (null: the first page). */
export const machinesQuery = (after: string | null, limit = MACHINES_PAGE_SIZE) =>
  queryOptions({
    queryKey: machineKeys.list(after),
    queryFn: ({ signal }) => {
      const params = new URLSearchParams({ limit: String(limit) })
      if (after) params.set('after', after)
      return apiFetch<DeviceList>(`/api/v1/devices?${params}`, { signal })
    },
  })
