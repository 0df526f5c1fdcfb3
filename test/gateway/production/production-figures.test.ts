import { describe, expect, it } from 'vitest'
import { groupFiguresOf, machineRatios, missRate, rankedParts, sumGroup, withOffline, zeroSeconds, type MachineSums } from '../../../src/gateway/production/production-figures.js'

/** A group's figures from its machines, as the fleet query's sums give them. */
const groupFigures = (members: readonly MachineSums[]) => groupFiguresOf(sumGroup(members))

const seconds = (s: Partial<ReturnType<typeof zeroSeconds>>) => ({ ...zeroSeconds(), ...s })

describe('production figures (§16), from hand-computed cases', () => {
  it('computes offline as the span left after the six states, never below 0', () => {
    const six = seconds({ productive: 3600, standby: 1800, scheduled_down: 600, unscheduled_down: 1800 })
    expect(withOffline(six, 9000).offline).toBe(1200)
    expect(withOffline(six, 7000).offline).toBe(0)
  })

  it('computes cph, availability, performance, quality and oee of one machine', () => {
    // planned = 3600 + 1800 + 0 + 1800 = 7200; cph = 3600 ÷ 1 h; performance = 3600 ÷ 4000; quality = 3600 ÷ 4000
    const ratios = machineRatios({ seconds: seconds({ productive: 3600, standby: 1800, scheduled_down: 600, unscheduled_down: 1800 }), placed: 3600, missed: 400, rated_cph: 4000 })
    expect(ratios.cph).toBe(3600)
    expect(ratios.availability).toBe(0.5)
    expect(ratios.performance).toBeCloseTo(0.9, 12)
    expect(ratios.quality).toBeCloseTo(0.9, 12)
    expect(ratios.oee).toBeCloseTo(0.405, 12)
  })

  it('does not cap ratios at 1: a machine faster than its rating has a performance and oee above 1', () => {
    const ratios = machineRatios({ seconds: seconds({ productive: 1800 }), placed: 3000, missed: 0, rated_cph: 4000 })
    expect(ratios).toEqual({ cph: 6000, availability: 1, performance: 1.5, quality: 1, oee: 1.5 })
  })

  it('answers null for a ratio whose divisor is 0 or unknown, and oee null when any of its three is', () => {
    expect(machineRatios({ seconds: seconds({ standby: 3600 }), placed: 0, missed: 0, rated_cph: 4000 })).toEqual({
      cph: null,
      availability: 0,
      performance: null,
      quality: null,
      oee: null,
    })
    const unrated = machineRatios({ seconds: seconds({ productive: 3600 }), placed: 100, missed: 0, rated_cph: null })
    expect(unrated).toEqual({ cph: 100, availability: 1, performance: null, quality: 1, oee: null })
    const idle = machineRatios({ seconds: seconds({ scheduled_down: 3600, non_scheduled: 100 }), placed: 0, missed: 5, rated_cph: 4000 })
    expect(idle).toEqual({ cph: null, availability: null, performance: null, quality: 0, oee: null })
  })

  it('sums a group and takes its performance over the machines that have a rated_cph only', () => {
    const members: MachineSums[] = [
      { seconds: seconds({ productive: 3600, standby: 3600, offline: 100 }), placed: 3600, missed: 400, rated_cph: 4000 },
      { seconds: seconds({ productive: 7200 }), placed: 10000, missed: 0, rated_cph: null },
      { seconds: seconds({ productive: 1800, unscheduled_down: 1800 }), placed: 1000, missed: 0, rated_cph: 2000 },
    ]
    const group = groupFigures(members)
    expect(group.devices).toBe(3)
    expect(group.seconds).toEqual(seconds({ productive: 12600, standby: 3600, unscheduled_down: 1800, offline: 100 }))
    expect(group.placed).toBe(14600)
    expect(group.missed).toBe(400)
    // 14600 placed over 3.5 productive hours
    expect(group.cph).toBeCloseTo(14600 / 3.5, 9)
    expect(group.availability).toBeCloseTo(12600 / 18000, 12)
    // (3600 + 1000) ÷ (4000 × 1 h + 2000 × 0.5 h)
    expect(group.performance).toBeCloseTo(0.92, 12)
    expect(group.quality).toBeCloseTo(14600 / 15000, 12)
    expect(group.oee).toBeCloseTo((12600 / 18000) * 0.92 * (14600 / 15000), 12)
  })

  it('gives a group without any rated machine (or no machine at all) a null performance and oee', () => {
    const unrated = groupFigures([{ seconds: seconds({ productive: 3600 }), placed: 10, missed: 0, rated_cph: null }])
    expect(unrated.performance).toBeNull()
    expect(unrated.oee).toBeNull()
    expect(groupFigures([])).toMatchObject({ devices: 0, placed: 0, cph: null, availability: null, performance: null, quality: null, oee: null })
  })

  it('ranks feeders by miss rate then missed, both descending, adding up counts of the same name', () => {
    expect(missRate(0, 0)).toBeNull()
    const ranked = rankedParts('feeder', [
      { name: 'F1', placed: 990, missed: 10 },
      { name: 'F2', placed: 90, missed: 10 },
      { name: 'F3', placed: 1980, missed: 20 },
      { name: 'F4', placed: 0, missed: 0 },
      { name: 'F1', placed: 990, missed: 10 },
    ])
    expect(ranked).toEqual([
      { feeder: 'F2', placed: 90, missed: 10, miss_rate: 0.1 },
      // same rate 0.01: more missed first
      { feeder: 'F1', placed: 1980, missed: 20, miss_rate: 0.01 },
      { feeder: 'F3', placed: 1980, missed: 20, miss_rate: 0.01 },
      { feeder: 'F4', placed: 0, missed: 0, miss_rate: null },
    ])
  })
})
