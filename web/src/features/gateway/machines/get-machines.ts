import { queryOptions } from '@tanstack/react-query'
import { api, ok } from '../../../api/api'
import { machineKeys, type MachineListFilter } from '../../../api/query-keys'
import { machineListsLive } from '../../../events/machine-events'

export const MACHINES_PAGE_SIZE = 100

/**
 * One page of GET /api/v1/devices with its counts: the machines whose id starts with
 * `filter.prefix` and that match `filter.selector` (§15), after the cursor `filter.after` (null: the first page). The answer is overlaid
 * with the `device` events that arrived while it was on its way (events/machine-events.ts).
 */
export const machinesQuery = (filter: MachineListFilter, limit = MACHINES_PAGE_SIZE) =>
  queryOptions({
    queryKey: machineKeys.list(filter),
    queryFn: async ({ signal, client }) => {
      const live = machineListsLive(client)
      const since = live.mark()
      const query = {
        limit,
        counts: true,
        ...(filter.prefix ? { prefix: filter.prefix } : {}),
        ...(filter.selector ? { selector: filter.selector } : {}),
        ...(filter.after ? { after: filter.after } : {}),
      }
      return live.overlay(await ok(api.GET('/api/v1/devices', { params: { query }, signal })), since)
    },
  })
