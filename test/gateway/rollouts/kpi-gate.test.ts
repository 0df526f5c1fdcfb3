import { describe, expect, it } from 'vitest'
import { gateVerdict, type GatedMachine } from '../../../src/gateway/rollouts/kpi-gate.js'

const gate = { max_miss_rate_increase: 0.01, min_placements: 1000, wait_seconds: 3600 }
const machine = (device_id: string, before: [number, number], after: [number, number]): GatedMachine => ({
  device_id,
  before: { placed: before[0], missed: before[1] },
  after: { placed: after[0], missed: after[1] },
})

describe('the rollouts’ KPI gate (§16)', () => {
  it('finds a regression when the stage’s miss rate rose by more than allowed', () => {
    // before 2 ÷ 2000 = 0.001; after (30 + 10) ÷ 2000 = 0.02: +0.019 > 0.01
    const verdict = gateVerdict(gate, [machine('a', [999, 1], [970, 30]), machine('b', [999, 1], [990, 10])], 0)
    expect(verdict).toMatchObject({ kind: 'regression', counted: 2, before_rate: 0.001, after_rate: 0.02 })
    if (verdict.kind !== 'waiting') expect(verdict.increase).toBeCloseTo(0.019, 12)
  })

  it('passes when the rise is within the allowed increase (or the rate fell)', () => {
    expect(gateVerdict(gate, [machine('a', [990, 10], [985, 15])], 0)).toMatchObject({ kind: 'passed', counted: 1 })
    expect(gateVerdict(gate, [machine('a', [900, 100], [1000, 0])], 0)).toMatchObject({ kind: 'passed', increase: -0.1 })
  })

  it('waits while a machine has fewer placements after installing than min_placements', () => {
    expect(gateVerdict(gate, [machine('a', [999, 1], [500, 100]), machine('b', [999, 1], [2000, 0])], 10)).toEqual({ kind: 'waiting', short: 1 })
  })

  it('after wait_seconds counts only the machines with enough placements, and passes with none', () => {
    const machines = [machine('a', [999, 1], [500, 100]), machine('b', [999, 1], [1000, 0])]
    expect(gateVerdict(gate, machines, 3600)).toMatchObject({ kind: 'passed', counted: 1, after_rate: 0 })
    expect(gateVerdict(gate, [machine('a', [999, 1], [10, 10])], 3600)).toMatchObject({ kind: 'passed', counted: 0 })
  })

  it('does not count a machine without placements before its offer, nor wait for it', () => {
    expect(gateVerdict(gate, [machine('new', [0, 0], [0, 50]), machine('b', [999, 1], [999, 1])], 0)).toMatchObject({ kind: 'passed', counted: 1 })
    expect(gateVerdict(gate, [machine('new', [0, 0], [500, 500])], 0)).toMatchObject({ kind: 'passed', counted: 0 })
  })
})
