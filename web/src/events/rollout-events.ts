import type { InfiniteData, QueryClient } from '@tanstack/react-query'
import { rolloutKeys } from '../api/query-keys'
import type { Rollout, RolloutDetail, RolloutDeviceEvent, RolloutEvent, RolloutList } from '../api/types'
import { refetchIfFetching } from './refetch-if-fetching'

/**
 * The rollout caches (contract §14) and how §11's `rollout` and `rollout-device` events, and the
 * answers of the rollout actions, land in them. Both queries are infinite:
 * - `rolloutKeys.lists()`: pages of `GET …/rollouts` (the firmware page's table "Rollouts");
 * - `rolloutKeys.detail(id)`: pages of `GET …/rollouts/{id}`, each carrying the rollout and a
 *   page of its machines (the rollout page); the rollout is kept the same in every page.
 */


/** Writes `patch` into every cached copy of the rollout; says whether the lists held it. */
function patchRollout(client: QueryClient, id: string, patch: Partial<Rollout>): boolean {
  let listed = false
  client.setQueryData<InfiniteData<RolloutList>>(rolloutKeys.lists(), (data) => {
    if (!data) return data
    const pages = data.pages.map((page) => {
      if (!page.rollouts.some((r) => r.rollout_id === id)) return page
      listed = true
      return { ...page, rollouts: page.rollouts.map((r) => (r.rollout_id === id ? { ...r, ...patch } : r)) }
    })
    return listed ? { ...data, pages } : data
  })
  client.setQueryData<InfiniteData<RolloutDetail>>(rolloutKeys.detail(id), (data) =>
    data ? { ...data, pages: data.pages.map((page) => ({ ...page, rollout: { ...page.rollout, ...patch } })) } : data,
  )
  return listed
}

/**
 * A whole rollout in hand (the answer to start, pause, resume, abort): it replaces the cached
 * copies; a rollout the lists do not hold yet (a new one) makes them refetch.
 */
export function putRollout(client: QueryClient, rollout: Rollout): void {
  if (!patchRollout(client, rollout.rollout_id, rollout)) void client.invalidateQueries({ queryKey: rolloutKeys.lists() })
}

/**
 * `event: rollout`: state, stage and counts change in place. A running or paused rollout the lists
 * lack was just created (only one is active at a time, and it is the newest): the lists refetch.
 * A completed or aborted one they lack is on an older page not loaded (an aborted rollout's
 * machines may still report): nothing to do.
 */
export function applyRolloutEvent(client: QueryClient, event: RolloutEvent): void {
  // §16: the event says how the KPI gate of the ended stage stands and why a rollout paused.
  const patch: Partial<Rollout> = { state: event.state, stage: event.stage, counts: event.counts, gate: event.gate, pause_reason: event.pause_reason }
  const listed = patchRollout(client, event.rollout_id, patch)
  if (listed) refetchIfFetching(client, rolloutKeys.lists())
  else if (event.state === 'running' || event.state === 'paused') void client.invalidateQueries({ queryKey: rolloutKeys.lists() })
  refetchIfFetching(client, rolloutKeys.detail(event.rollout_id))
}

/** How often a rollout's machine list may be refetched because of a machine the loaded pages lack. */
export const MISSING_MACHINE_REFETCH_MS = 10_000
const lastMissingRefetch = new WeakMap<QueryClient, Map<string, number>>()

/**
 * `event: rollout-device`: the machine's row changes in place on whichever loaded page holds it.
 * A machine not on the loaded pages is on a page not loaded yet when the API has more (nothing
 * to do: it shows right when that page loads). Only when every page is loaded and the machine is
 * still missing is the list older than the rollout's membership; then it refetches, at most once
 * per MISSING_MACHINE_REFETCH_MS per rollout, however many such events arrive.
 */
export function applyRolloutDeviceEvent(client: QueryClient, event: RolloutDeviceEvent, now = Date.now()): void {
  const key = rolloutKeys.detail(event.rollout_id)
  const cached = client.getQueryData<InfiniteData<RolloutDetail>>(key)
  if (!cached) return
  let found = false
  client.setQueryData<InfiniteData<RolloutDetail>>(key, (data) => {
    if (!data) return data
    const pages = data.pages.map((page) => {
      const index = page.devices.findIndex((d) => d.device_id === event.device_id)
      if (index < 0) return page
      found = true
      const devices = page.devices.slice()
      devices[index] = { ...devices[index]!, stage: event.stage, state: event.state, progress: event.progress, error: event.error, updated_at: event.at }
      return { ...page, devices }
    })
    return found ? { ...data, pages } : data
  })
  if (found) return refetchIfFetching(client, key)
  if (cached.pages[cached.pages.length - 1]?.next_after) return
  const times = lastMissingRefetch.get(client) ?? new Map<string, number>()
  lastMissingRefetch.set(client, times)
  const last = times.get(event.rollout_id)
  if (last !== undefined && now - last < MISSING_MACHINE_REFETCH_MS) return
  times.set(event.rollout_id, now)
  void client.invalidateQueries({ queryKey: key })
}
