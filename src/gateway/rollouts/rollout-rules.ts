/**
 * The rollout rules both the server and the web console apply (contract §14), in a module that
 * imports nothing so the console's bundle can take it as it is: the states, where each may go,
 * what an administrator may do in each, and what makes a stage list valid.
 */

/** A rollout's states: running and paused are "active"; one at a time. */
export const ROLLOUT_STATES = ['running', 'paused', 'completed', 'aborted'] as const
export type RolloutState = (typeof ROLLOUT_STATES)[number]

/** Where a rollout may go from each state, and nowhere else. */
export const ROLLOUT_TRANSITIONS = {
  running: ['paused', 'completed', 'aborted'],
  paused: ['running', 'aborted'],
  completed: [],
  aborted: [],
} as const satisfies Record<RolloutState, readonly RolloutState[]>

/** What an administrator may do to a rollout: the states each leaves and the one it reaches. */
export const ROLLOUT_ACTIONS = {
  pause: { from: ['running'], to: 'paused' },
  resume: { from: ['paused'], to: 'running' },
  abort: { from: ['running', 'paused'], to: 'aborted' },
} as const satisfies Record<string, { from: readonly RolloutState[]; to: RolloutState }>
export type RolloutAction = keyof typeof ROLLOUT_ACTIONS

/** Whether `action` applies to a rollout in `state` (anything else answers 409). */
export function rolloutActionApplies(action: RolloutAction, state: RolloutState): boolean {
  return (ROLLOUT_ACTIONS[action].from as readonly RolloutState[]).includes(state)
}

/** A machine's states in a rollout, in the order an install goes through them. */
export const MACHINE_STATES = ['pending', 'waiting', 'offered', 'downloading', 'installing', 'installed', 'failed'] as const
export type MachineState = (typeof MACHINE_STATES)[number]

export const MAX_STAGES = 20

/** What is wrong with a stage list, at which entry: the server words it, the console translates it. */
export type StagesProblem =
  | { kind: 'empty' }
  | { kind: 'tooMany'; count: number; max: number }
  | { kind: 'outOfRange'; value: number }
  | { kind: 'notAscending'; value: number; previous: number }
  | { kind: 'lastNot100'; value: number }

/** Why `stages` is not a valid stage list: 1–20 strictly ascending whole percentages from 1 to 100, the last 100. */
export function stagesProblem(stages: readonly number[]): StagesProblem | undefined {
  if (stages.length === 0) return { kind: 'empty' }
  if (stages.length > MAX_STAGES) return { kind: 'tooMany', count: stages.length, max: MAX_STAGES }
  for (let i = 0; i < stages.length; i++) {
    const value = stages[i]!
    if (!Number.isInteger(value) || value < 1 || value > 100) return { kind: 'outOfRange', value }
    if (i > 0 && value <= stages[i - 1]!) return { kind: 'notAscending', value, previous: stages[i - 1]! }
  }
  const last = stages[stages.length - 1]!
  return last === 100 ? undefined : { kind: 'lastNot100', value: last }
}
