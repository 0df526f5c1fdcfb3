import { infiniteQueryOptions } from '@tanstack/react-query'
import { apiFetch } from '../../../../api/api-client'
import { rolloutKeys } from '../../../../api/query-keys'
import type { RolloutDetail } from '../../../../api/types'
import { rolloutPath } from './get-rollouts'

export const ROLLOUT_MACHINES_PAGE_SIZE = 100

/** `GET …/rollouts/{id}`: the rollout and its machines in stage order, a page at a time (`after`). */
export const rolloutQuery = (id: string) =>
  infiniteQueryOptions({
    queryKey: rolloutKeys.detail(id),
    initialPageParam: null as string | null,
    queryFn: ({ pageParam, signal }) =>
      apiFetch<RolloutDetail>(`${rolloutPath(id)}?limit=${ROLLOUT_MACHINES_PAGE_SIZE}${pageParam ? `&after=${encodeURIComponent(pageParam)}` : ''}`, { signal }),
    getNextPageParam: (last) => (last.next_after === undefined || last.next_after === null ? null : String(last.next_after)),
  })
