import { queryOptions } from '@tanstack/react-query'
import { apiFetch } from '../../../api/api-client'
import { machineKeys } from '../../../api/query-keys'
import type { Overview } from '../../../api/types'
import { devicePath } from './device-api'

export const overviewQuery = (id: string) =>
  queryOptions({
    queryKey: machineKeys.overview(id),
    queryFn: ({ signal }) => apiFetch<Overview>(devicePath(id, '/overview'), { signal }),
    refetchInterval: 5_000,
  })
