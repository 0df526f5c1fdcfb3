// The answers of contract §16's production endpoints, named from the types generated from the
// server's /openapi.json (api/openapi.d.ts, `npm run gen:api`).
import type { components } from '../../../api/openapi'
import type { Answer } from '../../../api/types'

/** `GET /api/v1/devices/{id}/production?from&to`: feeders and nozzles worst first. */
export type MachineProduction = Answer<'/api/v1/devices/{device_id}/production', 'get'>
export type FeederFigures = MachineProduction['feeders'][number]
export type NozzleFigures = MachineProduction['nozzles'][number]
/** Seconds in each SEMI E10 state and offline. */
export type StateSeconds = MachineProduction['seconds']
/** The machine's current state now, whatever the window (fleetgate addition to §16); null when it never reported one. */
export type KnownState = NonNullable<MachineProduction['state']>

/** `GET /api/v1/devices/{id}/production/series`: buckets oldest first. */
export type ProductionSeries = Answer<'/api/v1/devices/{device_id}/production/series', 'get'>
export type SeriesBucket = ProductionSeries['buckets'][number]

/** `GET /api/v1/devices/{id}/production/jobs?limit&after`: newest first. */
export type JobList = Answer<'/api/v1/devices/{device_id}/production/jobs', 'get'>
export type Job = JobList['jobs'][number]

/** `GET /api/v1/production?from&to&selector&group_by`. */
export type FleetProduction = Answer<'/api/v1/production', 'get'>
/** A machine, or a label value (`null`: the machines without the label). */
export type ProductionGroup = FleetProduction['groups'][number]

/** The figures every window has (null where the divisor is 0 or unknown; ratios not capped at 1). */
export type Figures = Pick<ProductionGroup, 'seconds' | 'placed' | 'missed' | 'cph' | 'availability' | 'performance' | 'quality' | 'oee'>

/** SEMI E10 states a machine reports, and `offline` (its link closed, or before its first report). */
export const MACHINE_STATES = ['productive', 'standby', 'engineering', 'scheduled_down', 'unscheduled_down', 'non_scheduled', 'offline'] as const satisfies readonly (keyof StateSeconds)[]
export type MachineState = (typeof MACHINE_STATES)[number]

/** §11 `machine-state`: `state` one of MACHINE_STATES, `at` when the machine entered it. */
export type MachineStateEvent = components['schemas']['MachineStateEvent']
