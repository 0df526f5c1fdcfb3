import { infiniteQueryOptions } from '@tanstack/react-query'
import { apiFetch } from '../../../../api/api-client'
import { rolloutKeys } from '../../../../api/query-keys'
import type { RolloutList } from '../../../../api/types'

export const ROLLOUTS_PATH = '/api/v1/admin/firmware/slave/rollouts'
export const ROLLOUTS_PAGE_SIZE = 20

export const rolloutPath = (id: string) => `${ROLLOUTS_PATH}/${encodeURIComponent(id)}`

/** `GET …/rollouts`, newest first, older pages with `before`. */
export const rolloutsQuery = () =>
  infiniteQueryOptions({
    queryKey: rolloutKeys.lists(),
    initialPageParam: null as string | null,
    queryFn: ({ pageParam, signal }) =>
      apiFetch<RolloutList>(`${ROLLOUTS_PATH}?limit=${ROLLOUTS_PAGE_SIZE}${pageParam ? `&before=${encodeURIComponent(pageParam)}` : ''}`, { signal }),
    getNextPageParam: (last) => (last.next_before === undefined || last.next_before === null ? null : String(last.next_before)),
  })
