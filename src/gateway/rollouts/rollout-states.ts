import { Type, type Static } from '@sinclair/typebox'

/** A rollout's states (contract §14): running and paused are "active"; one at a time. */
export const ROLLOUT_STATES = ['running', 'paused', 'completed', 'aborted'] as const
export type RolloutState = (typeof ROLLOUT_STATES)[number]

/** A machine's states in a rollout, in the order an install goes through them. */
export const MACHINE_STATES = ['pending', 'waiting', 'offered', 'downloading', 'installing', 'installed', 'failed'] as const
export type MachineState = (typeof MACHINE_STATES)[number]

/** A machine in one of these has ended its part of the stage. */
export const ENDED_STATES: readonly MachineState[] = ['installed', 'failed']
/** Offered and not ended: the step time-out applies. */
export const IN_PROGRESS_STATES: readonly MachineState[] = ['offered', 'downloading', 'installing']

export const RolloutCounts = Type.Object(
  Object.fromEntries(MACHINE_STATES.map((s) => [s, Type.Integer({ minimum: 0 })])) as Record<MachineState, ReturnType<typeof Type.Integer>>,
  { description: 'Targeted machines per state' },
)
export type RolloutCounts = Static<typeof RolloutCounts>

export const emptyCounts = (): RolloutCounts =>
  Object.fromEntries(MACHINE_STATES.map((s) => [s, 0])) as RolloutCounts
