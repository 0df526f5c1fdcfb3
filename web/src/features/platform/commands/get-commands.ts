import { queryOptions } from '@tanstack/react-query'
import { api, ok } from '../../../api/api'
import { platformKeys } from '../../../api/query-keys'

export const COMMANDS_SHOWN = 50

/** A device's newest commands; §11 command events update their rows in place (events/event-router.ts). */
export const commandsQuery = (id: string) =>
  queryOptions({
    queryKey: platformKeys.commands(id),
    queryFn: ({ signal }) => ok(api.GET('/api/admin/commands', { params: { query: { device_id: id, limit: COMMANDS_SHOWN } }, signal })),
  })

/** GET /api/admin/meta: actions with their params' JSON Schemas, expressions, HID key names. Fixed per server. */
export const metaQuery = () =>
  queryOptions({
    queryKey: platformKeys.meta(),
    queryFn: ({ signal }) => ok(api.GET('/api/admin/meta', { signal })),
    staleTime: Infinity,
  })
