import type { InfiniteData, QueryClient } from '@tanstack/react-query'
import { firmwareKeys, machineKeys, platformKeys, productionKeys } from '../api/query-keys'
import type { DeviceEvent, Overview, RolloutDeviceEvent, RolloutEvent } from '../api/types'
import { machineListsLive } from './machine-events'
import { applyRolloutDeviceEvent, applyRolloutEvent } from './rollout-events'
import type { ServerEvent } from './event-stream'
import type { MachineStateEvent } from '../features/gateway/production/production-types'
import { refetchIfFetching } from './refetch-if-fetching'

interface CommandEvent {
  device_id: string
  id: string | number
  status: string
  attempts: number
}

/** Command states that come with the device's `result` or `error`. */
const FINISHED = new Set(['done', 'failed'])

interface CommandRow {
  id: string | number
  status: string
  attempts: number
}


/**
 * Puts one §11 event into the query cache: rows already cached are updated in place
 * (setQueryData), anything else is invalidated so it refetches when shown.
 */
export function routeEvent(client: QueryClient, event: ServerEvent): void {
  let data: Record<string, unknown>
  try {
    data = JSON.parse(event.data) as Record<string, unknown>
  } catch {
    return
  }
  switch (event.event) {
    case 'device': {
      const d = data as unknown as DeviceEvent
      machineListsLive(client).deviceChanged(d)
      client.setQueryData<Overview>(machineKeys.overview(d.device_id), (o) =>
        o ? { ...o, device: { ...o.device, alive: d.alive, registered: d.registered, version: d.version, last_heartbeat: d.last_heartbeat } } : o,
      )
      if (d.alive) void client.invalidateQueries({ queryKey: machineKeys.overview(d.device_id) })
      return
    }
    case 'device-status': {
      const id = String(data.device_id)
      client.setQueryData<Overview>(machineKeys.overview(id), (o) => (o ? { ...o, status: data.status as Record<string, unknown> } : o))
      return
    }
    case 'binding':
      machineListsLive(client).listsMissedEvents()
      return
    case 'release':
      void client.invalidateQueries({ queryKey: firmwareKeys.all })
      return
    case 'platform-device':
      void client.invalidateQueries({ queryKey: platformKeys.summary() })
      void client.invalidateQueries({ queryKey: platformKeys.devices() })
      void client.invalidateQueries({ queryKey: platformKeys.detail(String(data.device_id)) })
      return
    case 'command': {
      const c = data as unknown as CommandEvent
      let found = false
      const update = (rows: CommandRow[]) =>
        rows.map((row) => {
          if (String(row.id) !== String(c.id)) return row
          found = true
          return { ...row, status: c.status, attempts: c.attempts }
        })
      client.setQueriesData<{ commands: CommandRow[] } | InfiniteData<{ commands: CommandRow[] }>>({ queryKey: platformKeys.commands(c.device_id) }, (old) => {
        if (!old) return old
        if ('pages' in old) return { ...old, pages: old.pages.map((p) => ({ ...p, commands: update(p.commands) })) }
        return { ...old, commands: update(old.commands) }
      })
      // The event has no `result` or `error`: a finished command's row is read again to show them.
      if (!found || FINISHED.has(c.status)) void client.invalidateQueries({ queryKey: platformKeys.commands(c.device_id) })
      else refetchIfFetching(client, platformKeys.commands(c.device_id))
      void client.invalidateQueries({ queryKey: platformKeys.summary() })
      return
    }
    case 'machine-state': {
      // The machine's current state (§16), shown live on its page; its figures now say more too.
      const m = data as unknown as MachineStateEvent
      client.setQueryData<MachineStateEvent | null>(productionKeys.state(m.device_id), (old) => (old && old.at > m.at ? old : m))
      void client.invalidateQueries({ queryKey: productionKeys.machine(m.device_id) })
      return
    }
    case 'rollout':
      applyRolloutEvent(client, data as unknown as RolloutEvent)
      return
    case 'rollout-device':
      applyRolloutDeviceEvent(client, data as unknown as RolloutDeviceEvent)
      return
  }
}
