// Shapes of the server's answers, taken from the types generated from its /openapi.json
// (openapi.d.ts, `npm run gen:api`): names for what the console reads, never hand-written shapes.
import type { components, paths } from './openapi'

type Schemas = components['schemas']

/** The JSON a path answers with 200 (or 201) to `method`. */
export type Answer<P extends keyof paths, M extends 'get' | 'post' | 'put' | 'delete'> = paths[P][M] extends {
  responses: infer R
}
  ? R extends { 200: { content: { 'application/json': infer T } } }
    ? T
    : R extends { 201: { content: { 'application/json': infer T } } }
      ? T
      : never
  : never

/** The JSON body a path takes for `method`. */
export type Body<P extends keyof paths, M extends 'post' | 'put'> = paths[P][M] extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never

export type DeviceList = Answer<'/api/v1/devices', 'get'>
export type DeviceRecord = DeviceList['devices'][number]

// Labels and selectors (contract §15).
export type Labels = DeviceRecord['labels']
/** `GET /api/v1/devices/labels`: the keys in use, each with its values, most used first. */
export type LabelKeyList = Answer<'/api/v1/devices/labels', 'get'>
/** `PUT /api/v1/admin/devices/{id}/labels`: the machine with its labels as stored. */
export type LabelsAnswer = Answer<'/api/v1/admin/devices/{device_id}/labels', 'put'>

export type Overview = Answer<'/api/v1/devices/{device_id}/overview', 'get'>
export type PartialError = Overview['partial_errors'][string]

export const OVERVIEW_PIECES = ['system', 'task', 'hardware', 'vision', 'cameras', 'debug'] as const
export type OverviewPiece = (typeof OVERVIEW_PIECES)[number]

/** A forwarded answer (§5 "Proxied envelope"): `data` is whatever the machine said. */
export interface Envelope<T> {
  success: boolean
  status: number
  data: T
}

// Firmware rollouts (contract §14) and their events (§11).
export type RolloutEvent = Schemas['RolloutEvent']
export type RolloutDeviceEvent = Schemas['RolloutDeviceEvent']
export type DeviceEvent = Schemas['DeviceEvent']
export type CommandEvent = Schemas['CommandEvent']

export type RolloutState = RolloutEvent['state']
export const ROLLOUT_STATES = ['running', 'paused', 'completed', 'aborted'] as const satisfies readonly RolloutState[]

/** A machine's state in a rollout, in the order a machine goes through them. */
export type RolloutDeviceState = RolloutDeviceEvent['state']
export const ROLLOUT_DEVICE_STATES = ['pending', 'waiting', 'offered', 'downloading', 'installing', 'installed', 'failed'] as const satisfies readonly RolloutDeviceState[]

export type RolloutCounts = RolloutEvent['counts']

/** `GET /api/v1/admin/firmware/slave/rollouts`: newest first. */
export type RolloutList = Answer<'/api/v1/admin/firmware/slave/rollouts', 'get'>
export type Rollout = RolloutList['rollouts'][number]

/** `GET …/rollouts/{id}`: the rollout and one page of its machines, in stage order. */
export type RolloutDetail = Answer<'/api/v1/admin/firmware/slave/rollouts/{rollout_id}', 'get'>
export type RolloutDevice = RolloutDetail['devices'][number]

/** `POST …/rollouts` (201) and `POST …/rollouts/{id}/pause|resume|abort`. */
export type RolloutAnswer = Answer<'/api/v1/admin/firmware/slave/rollouts/{rollout_id}/pause', 'post'>

export type StartRolloutBody = Body<'/api/v1/admin/firmware/slave/rollouts', 'post'>
