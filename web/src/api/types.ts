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
  counts?: { total: number; online: number }
}

/** `event: device` */
export interface DeviceEvent {
  device_id: string
  alive: boolean
  registered: boolean
  version: string
  ip: string
  last_heartbeat: number | null
  at: number
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

// Firmware rollouts (contract §14) and their events (§11).
export const ROLLOUT_STATES = ['running', 'paused', 'completed', 'aborted'] as const
export type RolloutState = (typeof ROLLOUT_STATES)[number]

/** A machine's state in a rollout, in the order a machine goes through them. */
export const ROLLOUT_DEVICE_STATES = ['pending', 'waiting', 'offered', 'downloading', 'installing', 'installed', 'failed'] as const
export type RolloutDeviceState = (typeof ROLLOUT_DEVICE_STATES)[number]

export type RolloutCounts = Record<RolloutDeviceState, number>

export interface Rollout {
  rollout_id: string
  release_id: string
  display_version: string
  state: RolloutState
  /** Index of the open stage in `stages`. */
  stage: number
  /** Strictly ascending percentages of the targeted machines, the last 100. */
  stages: number[]
  max_failure_ratio: number
  soak_seconds: number
  /** Seconds since epoch. */
  created_at: number
  created_by: string
  counts: RolloutCounts
  targeted: number
}

/** `GET /api/v1/admin/firmware/slave/rollouts`: newest first. */
export interface RolloutList {
  success: boolean
  rollouts: Rollout[]
  next_before?: string
}

export interface RolloutDevice {
  device_id: string
  /** Index of the stage the machine belongs to. */
  stage: number
  state: RolloutDeviceState
  /** 0–100 while downloading or installing, else null. */
  progress: number | null
  error: string | null
  updated_at: number
}

/** `GET …/rollouts/{id}`: the rollout and one page of its machines, in stage order. */
export interface RolloutDetail {
  success: boolean
  rollout: Rollout
  devices: RolloutDevice[]
  next_after?: string
}

/** `POST …/rollouts` (201) and `POST …/rollouts/{id}/pause|resume|abort`. */
export interface RolloutAnswer {
  success: boolean
  rollout: Rollout
}

export interface StartRolloutBody {
  release_id: string
  devices?: string[]
  stages?: number[]
  max_failure_ratio?: number
  soak_seconds?: number
}

/** `event: rollout` */
export interface RolloutEvent {
  rollout_id: string
  release_id: string
  state: RolloutState
  stage: number
  counts: RolloutCounts
  at: number
}

/** `event: rollout-device` */
export interface RolloutDeviceEvent {
  rollout_id: string
  device_id: string
  stage: number
  state: RolloutDeviceState
  progress: number | null
  error: string | null
  at: number
}
