import { queryOptions } from '@tanstack/react-query'
import { api, ok } from '../../../api/api'
import { machineKeys } from '../../../api/query-keys'

/**
 * How many of the caller's machines a selector matches now: `GET /api/v1/devices?selector=…
 * &counts=true&limit=1` (one row asked for, only the count read). A malformed selector fails with
 * the server's `invalid_selector` (selector-problem.ts).
 */
export const selectorMatchesQuery = (selector: string) =>
  queryOptions({
    queryKey: machineKeys.selectorCount(selector),
    queryFn: async ({ signal }) => {
      const list = await ok(api.GET('/api/v1/devices', { params: { query: { selector, counts: true, limit: 1 } }, signal }))
      return list.counts?.total ?? list.devices.length
    },
    staleTime: 5_000,
  })
