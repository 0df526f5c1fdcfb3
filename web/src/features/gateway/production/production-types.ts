// The answers of contract §16's production endpoints, written by hand: they mirror §16 word for
// word until the server's /openapi.json lists those endpoints and `npm run gen:api` can name them
// from openapi.d.ts (api/types.ts) instead.

/** SEMI E10 states a machine reports, and `offline` (its link closed, or before its first report). */
export const MACHINE_STATES = ['productive', 'standby', 'engineering', 'scheduled_down', 'unscheduled_down', 'non_scheduled', 'offline'] as const
export type MachineState = (typeof MACHINE_STATES)[number]

/** Seconds in each state over the window, state intervals cut to it. */
export type StateSeconds = Record<MachineState, number>

/** The figures of a window: null where the divisor is 0 or unknown (ratios are not capped at 1). */
export interface Figures {
  seconds: StateSeconds
  placed: number
  missed: number
  cph: number | null
  availability: number | null
  performance: number | null
  quality: number | null
  oee: number | null
}

export interface FeederFigures {
  feeder: string
  placed: number
  missed: number
  miss_rate: number
}

export interface NozzleFigures {
  nozzle: string
  placed: number
  missed: number
  miss_rate: number
}

/** `GET /api/v1/devices/{id}/production?from&to`. */
export interface MachineProduction extends Figures {
  success: boolean
  device_id: string
  from: number
  to: number
  rated_cph: number | null
  faults: Record<string, number>
  /** Worst first: sorted by miss_rate, then missed, both descending. */
  feeders: FeederFigures[]
  nozzles: NozzleFigures[]
  jobs_completed: number
}

/** One bucket of `GET /api/v1/devices/{id}/production/series`: its start and the same figures. */
export interface SeriesBucket extends Figures {
  start: number
  faults?: Record<string, number>
  feeders?: FeederFigures[]
  nozzles?: NozzleFigures[]
  jobs_completed?: number
}

export interface ProductionSeries {
  success: boolean
  bucket: 'hour' | 'day'
  buckets: SeriesBucket[]
}

export interface Job {
  job_id: string
  order_id: string | null
  program: string | null
  started_at: number
  ended_at: number | null
  result: 'completed' | 'stopped' | 'failed' | null
  boards_planned: number | null
  boards_done: number | null
  placed: number
  missed: number
}

/** `GET /api/v1/devices/{id}/production/jobs?limit&after`: newest first. */
export interface JobList {
  success: boolean
  jobs: Job[]
  next_after: string | null
}

/** A group of `GET /api/v1/production`: a machine, or a label value (`null`: machines without the label). */
export interface ProductionGroup extends Figures {
  key: string | null
  devices: number
}

/** `GET /api/v1/production?from&to&selector&group_by`. */
export interface FleetProduction {
  success: boolean
  from: number
  to: number
  groups: ProductionGroup[]
  total: Omit<ProductionGroup, 'key'> & { key?: string | null }
}

/** §11 `machine-state`. */
export interface MachineStateEvent {
  device_id: string
  state: MachineState
  reason: string | null
  at: number
}
