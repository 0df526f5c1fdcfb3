import { queryOptions } from '@tanstack/react-query'
import { api, ok } from '../../../api/api'
import { platformKeys } from '../../../api/query-keys'

/** GET /api/admin/summary; §11 platform-device and command events invalidate it. */
export const summaryQuery = () =>
  queryOptions({
    queryKey: platformKeys.summary(),
    queryFn: ({ signal }) => ok(api.GET('/api/admin/summary', { signal })),
  })
