import { infiniteQueryOptions } from '@tanstack/react-query'
import { api, ok } from '../../../../api/api'
import { rolloutKeys } from '../../../../api/query-keys'

export const ROLLOUTS_PAGE_SIZE = 20

/** `GET …/rollouts`, newest first, older pages with `before`. */
export const rolloutsQuery = () =>
  infiniteQueryOptions({
    queryKey: rolloutKeys.lists(),
    initialPageParam: null as string | null,
    queryFn: ({ pageParam, signal }) =>
      ok(api.GET('/api/v1/admin/firmware/slave/rollouts', { params: { query: { limit: ROLLOUTS_PAGE_SIZE, ...(pageParam ? { before: pageParam } : {}) } }, signal })),
    getNextPageParam: (last) => last.next_before ?? null,
  })
