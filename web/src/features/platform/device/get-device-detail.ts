import { queryOptions } from '@tanstack/react-query'
import { api, ok } from '../../../api/api'
import { platformKeys } from '../../../api/query-keys'

/** GET /api/admin/device/{id}/detail; refreshed by §11 platform-device events. */
export const deviceDetailQuery = (id: string) =>
  queryOptions({
    queryKey: platformKeys.detail(id),
    queryFn: ({ signal }) => ok(api.GET('/api/admin/device/{device_id}/detail', { params: { path: { device_id: id } }, signal })),
  })
