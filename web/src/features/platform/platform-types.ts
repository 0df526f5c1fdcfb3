// Shapes of the platform admin API's answers (contract §8; the server's TypeBox schemas are the source).
export type CommandStatus = 'pending' | 'delivered' | 'done' | 'failed' | 'expired'
export const COMMAND_STATUSES: readonly CommandStatus[] = ['pending', 'delivered', 'done', 'failed', 'expired']

export interface PlatformDevice {
  device_id: string
  model: string | null
  firmware_version: string | null
  ip: string | null
  last_online_at: number | null
  online: boolean
  created_at: number
  expression: string | null
}

export interface PlatformDeviceList {
  success: boolean
  devices: PlatformDevice[]
  next_after?: string
}

export interface PlatformSummary {
  success: boolean
  devices: { total: number; online: number; offline: number }
  commands: Record<CommandStatus, number>
  telemetry_24h: number
  errors_24h: number
}

export type TelemetryValue = number | boolean | string

export interface DeviceDetail {
  success: boolean
  device: PlatformDevice
  latest_telemetry: Record<string, { ts: number; value: TelemetryValue }>
}

export interface PlatformCommand {
  id: number
  device_id: string
  action: string
  params: Record<string, unknown>
  status: CommandStatus
  attempts: number
  created_at: number
}

export interface CommandList {
  success: boolean
  commands: PlatformCommand[]
  next_before?: number
}

export interface LogEntry {
  id: number
  source: 'device' | 'operation'
  device_id: string | null
  level: 'debug' | 'info' | 'warn' | 'error'
  tag: string | null
  message: string
  ts: number
}

export interface LogList {
  success: boolean
  logs: LogEntry[]
  next_before?: number
}

/** A JSON Schema fragment as meta.actions describes each param. */
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

export interface PlatformMeta {
  success: boolean
  expressions: string[]
  hid_keys: Record<string, number>
  actions: { action: string; params: Record<string, ParamSchema> }[]
}
