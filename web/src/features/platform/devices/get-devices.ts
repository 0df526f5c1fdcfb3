import { queryOptions } from '@tanstack/react-query'
import { api, ok } from '../../../api/api'
import { platformKeys } from '../../../api/query-keys'

export const DEVICES_PAGE_SIZE = 100

/** One page of GET /api/admin/devices after the cursor `after` (null: the first page). */
export const devicesQuery = (after: string | null, limit = DEVICES_PAGE_SIZE) =>
  queryOptions({
    queryKey: platformKeys.devicePage(after),
    queryFn: ({ signal }) => ok(api.GET('/api/admin/devices', { params: { query: { limit, ...(after ? { after } : {}) } }, signal })),
  })
