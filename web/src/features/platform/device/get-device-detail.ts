import { queryOptions } from '@tanstack/react-query'
import { apiFetch } from '../../../api/api-client'
import { platformKeys } from '../../../api/query-keys'
import type { DeviceDetail } from '../platform-types'

/** GET /api/admin/device/{id}/detail; refreshed by §11 platform-device events. */
export const deviceDetailQuery = (id: string) =>
  queryOptions({
    queryKey: platformKeys.detail(id),
    queryFn: ({ signal }) => apiFetch<DeviceDetail>(`/api/admin/device/${encodeURIComponent(id)}/detail`, { signal }),
  })
