/**
 * The six kinds of contract §11 and their `data`. Gateway times (`at`, `last_heartbeat`) are
 * seconds since epoch, Platform times milliseconds (contract §2). `reason` is an extra field
 * telling why the event was raised.
 */
export const EVENT_KINDS = ['device', 'device-status', 'binding', 'release', 'platform-device', 'command'] as const
export type EventKind = (typeof EVENT_KINDS)[number]

export interface DeviceEventData {
  device_id: string
  alive: boolean
  registered: boolean
  version: string
  ip: string
  last_heartbeat: number | null
  at: number
  reason: 'registered' | 'taken_over' | 'closed' | 'not_alive' | 'alive'
}

export interface DeviceStatusEventData {
  device_id: string
  status: Record<string, unknown>
  at: number
}

export interface BindingEventData {
  username: string
  device_id: string
  bound: boolean
  at: number
}

export interface ReleaseEventData {
  release_id: string
  display_version: string
  active: boolean
  at: number
  reason: 'uploaded' | 'activated' | 'deactivated'
}

export interface PlatformDeviceEventData {
  device_id: string
  online: boolean
  last_online_at: number | null
  at: number
  reason: 'online' | 'offline' | 'added' | 'deleted'
}

export interface CommandEventData {
  device_id: string
  id: number
  action: string
  status: 'pending' | 'delivered' | 'done' | 'failed' | 'expired'
  attempts: number
  at: number
}

/** One event as the bus carries it between instances. */
export type FleetEvent =
  | { kind: 'device'; data: DeviceEventData }
  | { kind: 'device-status'; data: DeviceStatusEventData }
  | { kind: 'binding'; data: BindingEventData }
  | { kind: 'release'; data: ReleaseEventData }
  | { kind: 'platform-device'; data: PlatformDeviceEventData }
  | { kind: 'command'; data: CommandEventData }

export const isEventKind = (value: unknown): value is EventKind => typeof value === 'string' && (EVENT_KINDS as readonly string[]).includes(value)

export const gatewayNow = () => Date.now() / 1000
