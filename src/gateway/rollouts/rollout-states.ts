import { Type, type Static } from '@sinclair/typebox'

import { MACHINE_STATES, ROLLOUT_ACTIONS, ROLLOUT_TRANSITIONS, type MachineState, type RolloutState } from './rollout-rules.js'

// Every change of `rollouts.state` and `rollout_devices.state` is a compare-and-set that names the
// state it leaves, one of the transitions below (docs/coordination.md).
export { MACHINE_STATES, ROLLOUT_STATES, ROLLOUT_TRANSITIONS, type MachineState, type RolloutState } from './rollout-rules.js'

/** The states a rollout may reach from `From`. */
export type RolloutNext<From extends RolloutState> = (typeof ROLLOUT_TRANSITIONS)[From][number]

/**
 * Where a machine of a rollout may go from each state (a report of the same state moves its
 * progress only). pending → waiting when its stage opens; waiting → offered by the instance
 * holding its link; offered → waiting when it declines (busy) or its offer was lost with a link;
 * reports move it on; a machine silent past the step time-out fails. A report never moves a
 * waiting machine: a late frame of an old offer must not take it out of the queue.
 */
export const MACHINE_TRANSITIONS = {
  pending: ['waiting'],
  waiting: ['offered'],
  offered: ['waiting', 'downloading', 'installing', 'installed', 'failed'],
  downloading: ['downloading', 'installing', 'installed', 'failed'],
  installing: ['installing', 'installed', 'failed'],
  installed: [],
  failed: [],
} as const satisfies Record<MachineState, readonly MachineState[]>

/** The states a machine may reach from `From`. */
export type MachineNext<From extends MachineState> = (typeof MACHINE_TRANSITIONS)[From][number]

/** The states from which a machine may move to `to`: what a compare-and-set into `to` names. */
export function machineStatesLeadingTo(to: MachineState): MachineState[] {
  return MACHINE_STATES.filter((from) => (MACHINE_TRANSITIONS[from] as readonly MachineState[]).includes(to))
}

/** A machine in one of these has ended its part of the stage. */
export const ENDED_STATES = MACHINE_STATES.filter((s) => MACHINE_TRANSITIONS[s].length === 0)
/** Offered and not ended: reports apply and the step time-out runs. */
export const IN_PROGRESS_STATES = machineStatesLeadingTo('failed')

export const RolloutCounts = Type.Object(
  Object.fromEntries(MACHINE_STATES.map((s) => [s, Type.Integer({ minimum: 0 })])) as Record<MachineState, ReturnType<typeof Type.Integer>>,
  { description: 'Targeted machines per state' },
)
export type RolloutCounts = Static<typeof RolloutCounts>

export const emptyCounts = (): RolloutCounts =>
  Object.fromEntries(MACHINE_STATES.map((s) => [s, 0])) as RolloutCounts

/** The states every one of `F` may reach: a transition from several states goes only where each may. */
type CommonRolloutNext<F extends RolloutState> = (F extends unknown ? (x: RolloutNext<F>) => void : never) extends (x: infer I) => void ? I : never
type CommonMachineNext<F extends MachineState> = (F extends unknown ? (x: MachineNext<F>) => void : never) extends (x: infer I) => void ? I : never

declare const checked: unique symbol

/** A rollout state change allowed by ROLLOUT_TRANSITIONS (made only by `rolloutTransition`). */
export interface RolloutTransition {
  readonly from: readonly RolloutState[]
  readonly to: RolloutState
  readonly [checked]: 'rollout'
}

/** A machine state change allowed by MACHINE_TRANSITIONS (made only by `machineTransition`). */
export interface MachineTransition {
  readonly from: readonly MachineState[]
  readonly to: MachineState
  readonly [checked]: 'machine'
}

/** A rollout transition, checked at compile time: `to` must be allowed from every state of `from`. */
export function rolloutTransition<const F extends RolloutState>(from: readonly F[], to: CommonRolloutNext<F> & RolloutState): RolloutTransition {
  return { from, to } as unknown as RolloutTransition
}

/** A machine transition, checked at compile time: `to` must be allowed from every state of `from`. */
export function machineTransition<const F extends MachineState>(from: readonly F[], to: CommonMachineNext<F> & MachineState): MachineTransition {
  return { from, to } as unknown as MachineTransition
}

/** Every transition the rollouts take, named once. */
export const ROLLOUT_MOVES = {
  pause: rolloutTransition(ROLLOUT_ACTIONS.pause.from, ROLLOUT_ACTIONS.pause.to),
  resume: rolloutTransition(ROLLOUT_ACTIONS.resume.from, ROLLOUT_ACTIONS.resume.to),
  abort: rolloutTransition(ROLLOUT_ACTIONS.abort.from, ROLLOUT_ACTIONS.abort.to),
  complete: rolloutTransition(['running'], 'completed'),
} as const

export const MACHINE_MOVES = {
  stageOpens: machineTransition(['pending'], 'waiting'),
  offer: machineTransition(['waiting'], 'offered'),
  /** The offer went unanswered by a machine that linked again since: it may have been lost with the old link. */
  offerLost: machineTransition(['offered'], 'waiting'),
  /** The machine declined the offer (busy): it waits for another try. */
  declined: machineTransition(['offered'], 'waiting'),
  silent: machineTransition(['offered', 'downloading', 'installing'], 'failed'),
} as const

/** What a machine's `firmware-status` frame may move it to (`busy`: back to waiting). */
export type ReportedState = 'waiting' | 'downloading' | 'installing' | 'installed' | 'failed'

/** A machine's report of `state` applies from the offered states that may lead to it: never from pending or waiting. */
export function reportTransition(state: ReportedState): MachineTransition {
  if (state === 'waiting') return MACHINE_MOVES.declined
  return { from: machineStatesLeadingTo(state).filter((from) => IN_PROGRESS_STATES.includes(from)), to: state } as unknown as MachineTransition
}
