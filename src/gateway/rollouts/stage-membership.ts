import { createHash } from 'node:crypto'
import { MAX_STAGES, stagesProblem } from './rollout-rules.js'

/**
 * The targeted machines in the rollout's stable order: sorted by a hash of the rollout id and the
 * machine id, so a stage is a fair sample of the fleet (not the first ids alphabetically) and the
 * same rollout always gives the same order.
 */
export function stableOrder(rolloutId: string, deviceIds: readonly string[]): string[] {
  return deviceIds
    .map((id) => ({ id, key: createHash('sha256').update(`${rolloutId}\n${id}`).digest('hex') }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.id < b.id ? -1 : 1))
    .map((entry) => entry.id)
}

/** How many machines stages 0…k hold together: ceil(stages[k] % × targeted), in integers. */
export const cumulativeStageSize = (percent: number, targeted: number) => Math.floor((percent * targeted + 99) / 100)

/** The stage of each position: the first stage whose cumulative size covers it. */
export function stageOfPositions(stages: readonly number[], targeted: number): number[] {
  const stageOf: number[] = []
  stages.forEach((percent, stage) => {
    const end = cumulativeStageSize(percent, targeted)
    while (stageOf.length < end) stageOf.push(stage)
  })
  return stageOf
}

/** Why `stages` is not a valid stage list (contract §14), in words, or undefined. */
export function stagesMessage(stages: readonly number[]): string | undefined {
  const problem = stagesProblem(stages)
  if (!problem) return undefined
  switch (problem.kind) {
    case 'empty':
    case 'tooMany':
      return `stages must hold 1 to ${MAX_STAGES} percentages`
    case 'outOfRange':
      return 'each stage is an integer percentage from 1 to 100'
    case 'notAscending':
      return 'stages must be strictly ascending'
    case 'lastNot100':
      return 'the last stage must be 100'
  }
}
