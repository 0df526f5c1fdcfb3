import { Type, type Static } from '@sinclair/typebox'
import type { Selectable } from 'kysely'
import type { Database } from '../../storage/database.js'
import { Millis, Nullable } from '../platform-schemas.js'

export type DeviceRow = Selectable<Database['platform_devices']>

export const DeviceRecord = Type.Object({
  device_id: Type.String(),
  model: Nullable(Type.String()),
  firmware_version: Nullable(Type.String()),
  ip: Nullable(Type.String()),
  last_online_at: Nullable(Millis('Last heartbeat')),
  online: Type.Boolean({ description: 'A heartbeat arrived within PLATFORM_OFFLINE_SECONDS' }),
  created_at: Millis('Creation'),
  expression: Nullable(Type.String({ description: 'Current expression set from the console' })),
  uptime_s: Nullable(Type.Number({ description: 'Reported in the last heartbeat' })),
  rssi: Nullable(Type.Number({ description: 'Reported in the last heartbeat' })),
})
export type DeviceRecord = Static<typeof DeviceRecord>

export const isOnline = (row: DeviceRow, onlineSince: number) => row.last_online_at !== null && row.last_online_at >= onlineSince

export function toDeviceRecord(row: DeviceRow, onlineSince: number): DeviceRecord {
  return {
    device_id: row.device_id,
    model: row.model,
    firmware_version: row.firmware_version,
    ip: row.ip,
    last_online_at: row.last_online_at,
    online: isOnline(row, onlineSince),
    created_at: row.created_at,
    expression: row.expression,
    uptime_s: row.uptime_s,
    rssi: row.rssi,
  }
}
