// Shapes of the server's answers the console reads (the server's TypeBox schemas are the source).
export interface DeviceRecord {
  device_id: string
  hostname: string
  ip: string
  version: string
  connect_time: number | null
  last_heartbeat: number | null
  last_status: Record<string, unknown>
  alive: boolean
  registered: boolean
  connected: boolean
}

export interface DeviceList {
  success: boolean
  devices: DeviceRecord[]
  next_after?: string
}

export interface PartialError {
  error: string
  message: string
  status?: number
}

export const OVERVIEW_PIECES = ['system', 'task', 'hardware', 'vision', 'cameras', 'debug'] as const
export type OverviewPiece = (typeof OVERVIEW_PIECES)[number]

export interface Overview {
  success: boolean
  device: DeviceRecord
  status: Record<string, unknown>
  detail: Record<OverviewPiece, Record<string, unknown>>
  partial_errors: Partial<Record<OverviewPiece, PartialError>>
  partial: boolean
}

export interface Envelope<T> {
  success: boolean
  status: number
  data: T
}
