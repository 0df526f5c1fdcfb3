import type { QueryClient } from '@tanstack/react-query'
import { machineKeys, type MachineListFilter } from '../api/query-keys'
import type { DeviceEvent, DeviceList } from '../api/types'

/**
 * The machines lists (pages of `GET /api/v1/devices`, `machineKeys.list(filter)`) kept true under
 * a storm of `device` events: 5,000 machines re-linking after a server restart raise 10,000 of
 * them in seconds, and contract §12 wants an open `/machines` page to settle on the truth within
 * 10 s while asking for at most 50 list pages meanwhile.
 *
 * - A machine on a cached page changes in place (and the page's online count with it): no request.
 * - A fetch under way may have read the server before an event; its answer is overlaid with every
 *   event received since it started, so it never puts an old status back, and is never cancelled.
 * - A machine on no cached page (another page, or one never listed: a first registration), a
 *   binding, or a reconnect's gap changes what the lists or their counts would say: the lists
 *   refetch, at most once every LIST_REFETCH_INTERVAL_MS (the first at once, then one more after
 *   the last such event), and only after the fetch in flight has answered.
 */
export const LIST_REFETCH_INTERVAL_MS = 2_000
/** How often a due refetch looks again whether the fetch in flight has answered. */
const IN_FLIGHT_POLL_MS = 200
/** Events are remembered this long for overlaying answers of fetches that started before them. */
const EVENT_MEMORY_MS = 60_000

type Row = DeviceList['devices'][number]

interface Seen {
  event: DeviceEvent
  /** Receipt order: a fetch started at mark m is overlaid with the events whose seq > m. */
  seq: number
  receivedAt: number
}

/** The fields of a device event a list row shows. */
function patchRow(row: Row, event: DeviceEvent): Row {
  return { ...row, alive: event.alive, registered: event.registered, version: event.version, ip: event.ip, last_heartbeat: event.last_heartbeat }
}

function onlineDelta(before: Row, after: Row): number {
  return before.alive === after.alive ? 0 : after.alive ? 1 : -1
}

const filterOf = (queryKey: readonly unknown[]): MachineListFilter | undefined => queryKey[2] as MachineListFilter | undefined

export class MachineListsLive {
  private readonly seen = new Map<string, Seen>()
  private seq = 0
  private timer: ReturnType<typeof setTimeout> | undefined
  private lastRefetchAt = Number.NEGATIVE_INFINITY
  /** Refetches this throttle asked for (for tests and the bench). */
  refetches = 0

  constructor(
    private readonly client: QueryClient,
    private readonly now: () => number = Date.now,
  ) {}

  /** Where a list fetch starts: hand it back to `overlay` with the answer. */
  mark(): number {
    return this.seq
  }

  /** The answer of a fetch started at `since`, with every device event received after that laid over it. */
  overlay(list: DeviceList, since: number): DeviceList {
    if (this.seq === since) return list
    let online = 0
    let changed = false
    const devices = list.devices.map((row) => {
      const seen = this.seen.get(row.device_id)
      if (!seen || seen.seq <= since) return row
      changed = true
      const next = patchRow(row, seen.event)
      online += onlineDelta(row, next)
      return next
    })
    if (!changed) return list
    return { ...list, devices, ...(list.counts ? { counts: { ...list.counts, online: list.counts.online + online } } : {}) }
  }

  /** `event: device`. */
  deviceChanged(event: DeviceEvent): void {
    this.remember(event)
    let found = false
    this.client.setQueriesData<DeviceList>({ queryKey: machineKeys.lists() }, (list) => {
      if (!list) return list
      const index = list.devices.findIndex((row) => row.device_id === event.device_id)
      if (index < 0) return list
      found = true
      const before = list.devices[index]!
      const after = patchRow(before, event)
      const devices = list.devices.slice()
      devices[index] = after
      const delta = onlineDelta(before, after)
      return { ...list, devices, ...(list.counts && delta !== 0 ? { counts: { ...list.counts, online: list.counts.online + delta } } : {}) }
    })
    if (!found && this.listedUnder(event.device_id)) this.listsMissedEvents()
  }

  /**
   * Something changed that the cached pages cannot show by themselves (a machine not on them, a
   * binding, events lost while reconnecting): refetch the lists, throttled, never cancelling.
   */
  listsMissedEvents(): void {
    if (this.timer !== undefined) return
    this.timer = setTimeout(() => this.fire(), Math.max(0, this.lastRefetchAt + LIST_REFETCH_INTERVAL_MS - this.now()))
  }

  /** Stops a pending refetch (the client is being cleared). */
  dispose(): void {
    clearTimeout(this.timer)
    this.timer = undefined
  }

  private fire(): void {
    this.timer = undefined
    const queryKey = machineKeys.lists()
    // The fetch in flight may have read the server before the events: wait for it, then refetch.
    if (this.client.isFetching({ queryKey }) > 0) {
      this.timer = setTimeout(() => this.fire(), IN_FLIGHT_POLL_MS)
      return
    }
    this.lastRefetchAt = this.now()
    this.refetches += 1
    void this.client.invalidateQueries({ queryKey }, { cancelRefetch: false })
  }

  /** Whether a cached list could hold this machine (its search prefix matches). */
  private listedUnder(deviceId: string): boolean {
    return this.client
      .getQueryCache()
      .findAll({ queryKey: machineKeys.lists() })
      .some((query) => deviceId.startsWith(filterOf(query.queryKey)?.prefix ?? ''))
  }

  private remember(event: DeviceEvent): void {
    const receivedAt = this.now()
    this.seq += 1
    this.seen.delete(event.device_id)
    this.seen.set(event.device_id, { event, seq: this.seq, receivedAt })
    // The map is in receipt order: forget from the front what no fetch can still be waiting for.
    for (const [id, seen] of this.seen) {
      if (receivedAt - seen.receivedAt < EVENT_MEMORY_MS) break
      this.seen.delete(id)
    }
  }
}

const lives = new WeakMap<QueryClient, MachineListsLive>()

/** The one MachineListsLive of a query client. */
export function machineListsLive(client: QueryClient): MachineListsLive {
  let live = lives.get(client)
  if (!live) {
    live = new MachineListsLive(client)
    lives.set(client, live)
  }
  return live
}

export const machineListsMissedEvents = (client: QueryClient): void => machineListsLive(client).listsMissedEvents()
