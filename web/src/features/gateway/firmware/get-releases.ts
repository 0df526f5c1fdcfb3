import { infiniteQueryOptions } from '@tanstack/react-query'
import { api, ok } from '../../../api/api'
import { firmwareKeys } from '../../../api/query-keys'
import type { Answer } from '../../../api/types'

export type ReleaseList = Answer<'/api/v1/admin/firmware/slave/releases', 'get'>
export type Release = ReleaseList['releases'][number]

export const RELEASES_PATH = '/api/v1/admin/firmware/slave/releases'

export const releasesQuery = () =>
  infiniteQueryOptions({
    queryKey: firmwareKeys.releases(),
    initialPageParam: null as string | null,
    queryFn: ({ pageParam, signal }) =>
      ok(api.GET('/api/v1/admin/firmware/slave/releases', { params: { query: { limit: 100, ...(pageParam ? { before: pageParam } : {}) } }, signal })),
    getNextPageParam: (last) => last.next_before ?? null,
  })

/** POST …/releases/{release_id}/activate: the previously active release goes back to published. */
export const activateRelease = (releaseId: string) =>
  ok(api.POST('/api/v1/admin/firmware/slave/releases/{release_id}/activate', { params: { path: { release_id: releaseId } } }))
