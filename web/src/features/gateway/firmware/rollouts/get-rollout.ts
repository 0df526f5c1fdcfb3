import { infiniteQueryOptions } from '@tanstack/react-query'
import { api, ok } from '../../../../api/api'
import { rolloutKeys } from '../../../../api/query-keys'

export const ROLLOUT_MACHINES_PAGE_SIZE = 100

/** `GET …/rollouts/{id}`: the rollout and its machines in stage order, a page at a time (`after`). */
export const rolloutQuery = (id: string) =>
  infiniteQueryOptions({
    queryKey: rolloutKeys.detail(id),
    initialPageParam: null as string | null,
    queryFn: ({ pageParam, signal }) =>
      ok(
        api.GET('/api/v1/admin/firmware/slave/rollouts/{rollout_id}', {
          params: { path: { rollout_id: id }, query: { limit: ROLLOUT_MACHINES_PAGE_SIZE, ...(pageParam ? { after: pageParam } : {}) } },
          signal,
        }),
      ),
    getNextPageParam: (last) => last.next_after ?? null,
  })
