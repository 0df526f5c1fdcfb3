import { queryOptions } from '@tanstack/react-query'
import { api, ok } from '../../../api/api'
import { labelKeys } from '../../../api/query-keys'

/** `GET /api/v1/devices/labels`: the label keys in use over the caller's machines, each with its values (§15). */
export const labelKeyListQuery = () =>
  queryOptions({
    queryKey: labelKeys.all,
    queryFn: ({ signal }) => ok(api.GET('/api/v1/devices/labels', { signal })),
    staleTime: 30_000,
  })
