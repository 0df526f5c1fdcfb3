import { describe, expect, it } from 'vitest'
import { gateReadiness, gateVerdict, type InstalledMachine } from '../../../src/gateway/rollouts/kpi-gate.js'

const gate = { max_miss_rate_increase: 0.01, min_placements: 1000, wait_seconds: 3600 }
const compared = (before: [number, number], after: [number, number]) => ({ before: { placed: before[0], missed: before[1] }, after: { placed: after[0], missed: after[1] } })
const installed = (device_id: string, after: [number, number], placedBefore = true): InstalledMachine => ({ device_id, offered_at: 0, after: { placed: after[0], missed: after[1] }, placedBefore })

describe('the rollouts’ KPI gate (§16)', () => {
  it('finds a regression when the stage’s miss rate rose by more than allowed', () => {
    // before 2 ÷ 2000 = 0.001; after (30 + 10) ÷ 2000 = 0.02: +0.019 > 0.01
    const verdict = gateVerdict(gate, [compared([999, 1], [970, 30]), compared([999, 1], [990, 10])])
    expect(verdict).toMatchObject({ kind: 'regression', counted: 2, before_rate: 0.001, after_rate: 0.02 })
    expect(verdict.increase).toBeCloseTo(0.019, 12)
  })

  it('passes when the rise is within the allowed increase (or the rate fell), and with no machine to count', () => {
    expect(gateVerdict(gate, [compared([990, 10], [985, 15])])).toMatchObject({ kind: 'passed', counted: 1 })
    expect(gateVerdict(gate, [compared([900, 100], [1000, 0])])).toMatchObject({ kind: 'passed', increase: -0.1 })
    expect(gateVerdict(gate, [])).toMatchObject({ kind: 'passed', counted: 0, increase: null })
  })

  it('waits while a machine has fewer placements after installing than min_placements', () => {
    expect(gateReadiness(gate, [installed('a', [500, 100]), installed('b', [2000, 0])], 10)).toEqual({ kind: 'waiting', short: 1 })
  })

  it('after wait_seconds counts only the machines with enough placements', () => {
    const ready = gateReadiness(gate, [installed('a', [500, 100]), installed('b', [1000, 0])], 3600)
    expect(ready.kind === 'ready' && ready.counted.map((m) => m.device_id)).toEqual(['b'])
    const none = gateReadiness(gate, [installed('a', [10, 10])], 3600)
    expect(none.kind === 'ready' && none.counted).toEqual([])
  })

  it('does not count a machine without placements before its offer, nor wait for it', () => {
    const ready = gateReadiness(gate, [installed('new', [0, 50], false), installed('b', [999, 1])], 0)
    expect(ready.kind === 'ready' && ready.counted.map((m) => m.device_id)).toEqual(['b'])
  })
})
