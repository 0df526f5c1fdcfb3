import { queryOptions } from '@tanstack/react-query'
import { apiFetch } from '../../../api/api-client'
import { platformKeys } from '../../../api/query-keys'
import type { CommandList, PlatformMeta } from '../platform-types'

export const COMMANDS_SHOWN = 50

/** A device's newest commands; §11 command events update their rows in place (events/event-router.ts). */
export const commandsQuery = (id: string) =>
  queryOptions({
    queryKey: platformKeys.commands(id),
    queryFn: ({ signal }) =>
      apiFetch<CommandList>(`/api/admin/commands?${new URLSearchParams({ device_id: id, limit: String(COMMANDS_SHOWN) })}`, { signal }),
  })

/** GET /api/admin/meta: actions with their params' JSON Schemas, expressions, HID key names. Fixed per server. */
export const metaQuery = () =>
  queryOptions({
    queryKey: platformKeys.meta(),
    queryFn: ({ signal }) => apiFetch<PlatformMeta>('/api/admin/meta', { signal }),
    staleTime: Infinity,
  })
