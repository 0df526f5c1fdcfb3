import { describe, expect, it } from 'vitest'
import { cumulativeStageSize, stableOrder, stageOfPositions, stagesMessage } from '../../../src/gateway/rollouts/stage-membership.js'

describe('stage membership', () => {
  const ids = Array.from({ length: 200 }, (_, i) => `pnp-${String(i).padStart(3, '0')}`)

  it('orders machines by a hash of the rollout id: stable for one rollout, different for another, not the id order', () => {
    const a = stableOrder('ro-a', ids)
    expect(stableOrder('ro-a', [...ids].reverse())).toEqual(a)
    expect(stableOrder('ro-b', ids)).not.toEqual(a)
    expect(a).not.toEqual(ids)
    expect(new Set(a)).toEqual(new Set(ids))
  })

  it('gives stage k the first ceil(stages[k] % of targeted) machines', () => {
    expect(cumulativeStageSize(10, 30)).toBe(3)
    expect(cumulativeStageSize(1, 30)).toBe(1)
    expect(cumulativeStageSize(33, 10)).toBe(4)
    expect(cumulativeStageSize(100, 7)).toBe(7)
    expect(stageOfPositions([1, 10, 100], 30)).toEqual([0, 1, 1, ...Array(27).fill(2)])
    // A stage may add nobody when the fleet is small.
    expect(stageOfPositions([10, 20, 100], 2)).toEqual([0, 2])
    expect(stageOfPositions([100], 3)).toEqual([0, 0, 0])
  })

  it('accepts 1–20 strictly ascending integer percentages ending at 100, and says what is wrong otherwise', () => {
    expect(stagesMessage([100])).toBeUndefined()
    expect(stagesMessage([1, 10, 100])).toBeUndefined()
    expect(stagesMessage(Array.from({ length: 20 }, (_, i) => 81 + i))).toBeUndefined()
    expect(stagesMessage([])).toMatch(/1 to 20/)
    expect(stagesMessage(Array.from({ length: 21 }, (_, i) => 80 + i))).toMatch(/1 to 20/)
    expect(stagesMessage([10, 10, 100])).toMatch(/ascending/)
    expect(stagesMessage([10, 90])).toMatch(/last stage/)
    expect(stagesMessage([0, 100])).toMatch(/1 to 100/)
    expect(stagesMessage([2.5, 100])).toMatch(/integer/)
  })
})
