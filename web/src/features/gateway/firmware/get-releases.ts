import { infiniteQueryOptions } from '@tanstack/react-query'
import { apiFetch } from '../../../api/api-client'
import { firmwareKeys } from '../../../api/query-keys'

export interface Release {
  release_id: string
  image_version: number
  display_version: string
  state: 'published' | 'active'
  size: number
  sha256: string
  created_at: number
  created_by: string
  download_count: number
}

interface ReleaseList {
  releases: Release[]
  next_before?: string
}

export const RELEASES_PATH = '/api/v1/admin/firmware/slave/releases'

export const releasesQuery = () =>
  infiniteQueryOptions({
    queryKey: firmwareKeys.releases(),
    initialPageParam: null as string | null,
    queryFn: ({ pageParam, signal }) =>
      apiFetch<ReleaseList>(`${RELEASES_PATH}?limit=100${pageParam ? `&before=${encodeURIComponent(pageParam)}` : ''}`, { signal }),
    getNextPageParam: (last) => last.next_before ?? null,
  })
