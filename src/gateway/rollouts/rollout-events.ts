import { Type, type Static } from '@sinclair/typebox'
import { eventSchema } from '../../events/event-envelope.js'
import { nowSeconds } from '../../lib/time.js'
import { GATE_STATES, type GateState } from './kpi-gate.js'
import { PAUSE_REASONS, type PauseReason } from './pause-reasons.js'
import { MACHINE_STATES, RolloutCounts, ROLLOUT_STATES, type MachineState, type RolloutState } from './rollout-states.js'

/** `data` of `event: rollout`: created, state or stage changed, or counts changed (at most once a second). */
export const RolloutEventData = Type.Object({
  rollout_id: Type.String(),
  release_id: Type.String(),
  state: Type.Union(ROLLOUT_STATES.map((s) => Type.Literal(s))),
  stage: Type.Integer({ description: 'Index of the open stage' }),
  counts: RolloutCounts,
  gate: Type.Union([...GATE_STATES.map((s) => Type.Literal(s)), Type.Null()], { description: 'The KPI gate of the ended stage (§16), as on the rollout' }),
  pause_reason: Type.Union([...PAUSE_REASONS.map((s) => Type.Literal(s)), Type.Null()], { description: 'Why it is paused (null unless paused)' }),
  at: Type.Number({ description: 'Event time (s since epoch)' }),
})
export const RolloutEvent = eventSchema('rollout', RolloutEventData)
export type RolloutEvent = Static<typeof RolloutEvent>

/** `data` of `event: rollout-device`: a machine's state in a rollout changed (progress: at most once a second). */
export const RolloutDeviceEventData = Type.Object({
  rollout_id: Type.String(),
  device_id: Type.String(),
  stage: Type.Integer(),
  state: Type.Union(MACHINE_STATES.map((s) => Type.Literal(s))),
  progress: Type.Union([Type.Number(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
  at: Type.Number({ description: 'Event time (s since epoch)' }),
})
export const RolloutDeviceEvent = eventSchema('rollout-device', RolloutDeviceEventData)
export type RolloutDeviceEvent = Static<typeof RolloutDeviceEvent>

export const rolloutEvent = (r: {
  rollout_id: string
  release_id: string
  state: RolloutState
  stage: number
  counts: RolloutCounts
  gate: GateState | null
  pause_reason: PauseReason | null
}): RolloutEvent => ({
  kind: 'rollout',
  data: { rollout_id: r.rollout_id, release_id: r.release_id, state: r.state, stage: r.stage, counts: r.counts, gate: r.gate, pause_reason: r.pause_reason, at: nowSeconds() },
})

export const rolloutDeviceEvent = (d: {
  rollout_id: string
  device_id: string
  stage: number
  state: MachineState
  progress: number | null
  error: string | null
}): RolloutDeviceEvent => ({
  kind: 'rollout-device',
  data: { rollout_id: d.rollout_id, device_id: d.device_id, stage: d.stage, state: d.state, progress: d.progress, error: d.error, at: nowSeconds() },
})
