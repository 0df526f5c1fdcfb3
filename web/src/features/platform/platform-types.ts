// Shapes of the platform admin API's answers (contract §8), taken from the types generated from the
// server's /openapi.json (api/openapi.d.ts, `npm run gen:api`).
import type { Answer } from '../../api/types'

export type PlatformDeviceList = Answer<'/api/admin/devices', 'get'>
export type PlatformDevice = PlatformDeviceList['devices'][number]

export type PlatformSummary = Answer<'/api/admin/summary', 'get'>

export type DeviceDetail = Answer<'/api/admin/device/{device_id}/detail', 'get'>
export type TelemetryValue = DeviceDetail['latest_telemetry'][string]['value']

export type CommandList = Answer<'/api/admin/commands', 'get'>
export type PlatformCommand = CommandList['commands'][number]
export type CommandStatus = PlatformCommand['status']
export const COMMAND_STATUSES = ['pending', 'delivered', 'done', 'failed', 'expired'] as const satisfies readonly CommandStatus[]

export type LogList = Answer<'/api/admin/logs', 'get'>
export type LogEntry = LogList['logs'][number]

export type PlatformMeta = Answer<'/api/admin/meta', 'get'>

/** A JSON Schema fragment as meta.actions describes each param (the API says only "an object"). */
export interface ParamSchema {
  type?: string
  enum?: unknown[]
  minimum?: number
  maximum?: number
  minLength?: number
  maxLength?: number
  minItems?: number
  maxItems?: number
  items?: ParamSchema
  anyOf?: ParamSchema[]
  description?: string
}
