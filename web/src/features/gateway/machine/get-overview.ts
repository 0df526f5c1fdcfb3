import { queryOptions, useQuery } from '@tanstack/react-query'
import { apiFetch } from '../../../api/api-client'
import { machineKeys } from '../../../api/query-keys'
import type { Overview } from '../../../api/types'
import { devicePath } from './device-api'

/** The overview as cached: `fetchedAt` (epoch ms) tells a fetch from an event's update (`device-status` replaces `status`). */
export type PolledOverview = Overview & { fetchedAt: number }

const ONLINE_EVERY_MS = 5_000
const OFFLINE_EVERY_MS = 30_000

/**
 * The overview, refreshed every 5 s while the machine is online. While it is offline the gateway
 * answers by itself; the `device` event of its return refetches it at once, and a slow refresh
 * covers a lost event stream.
 */
export const overviewQuery = (id: string) =>
  queryOptions({
    queryKey: machineKeys.overview(id),
    queryFn: async ({ signal }): Promise<PolledOverview> => ({ ...(await apiFetch<Overview>(devicePath(id, '/overview'), { signal })), fetchedAt: Date.now() }),
    refetchInterval: (query) => {
      const data = query.state.data
      if (!data) return ONLINE_EVERY_MS
      const every = data.device.alive === false ? OFFLINE_EVERY_MS : ONLINE_EVERY_MS
      // Every update of the query restarts this timer, and heartbeat events update it each second
      // or so: count from the last fetch, or a machine beating faster than 5 s is never refreshed.
      return Math.max(250, every - (Date.now() - data.fetchedAt))
    },
  })

/**
 * Whether the gateway knows the machine to be online (its overview says so, kept live by the
 * event stream). Nothing is asked of, or polled from, a machine that is not.
 */
export function useMachineOnline(id: string): boolean {
  return useQuery({ ...overviewQuery(id), select: (o) => o.device.alive }).data === true
}

/** Options of a query forwarded to the machine: asked only while it is online, polled every `ms` then. */
export const whileOnline = (online: boolean, ms: number | false) => ({ enabled: online, refetchInterval: online ? ms : (false as const) })
