import { describe, expect, it } from 'vitest'
import type { ProductionEventInput } from '@fleetgate/device-agent'
import { productionEventError } from '@fleetgate/device-agent/protocol'
import { ProductionMonitor } from '../../src/sim/production/production-monitor.js'
import { seededRandom } from '../../src/sim/production/seeded-random.js'
import { testMachine } from './machine-helpers.js'

type Reported = ProductionEventInput & { ts: number }

/** A machine at 36,000 CPH (111 ms a part) whose history of `hours` is collected. */
function history(hours: number, options: { badFeeders?: { feeder: string; rate: number }[]; missRate?: number } = {}, seed = 11) {
  const { clock, machine } = testMachine({ placeMsPerItem: 111 })
  const events: Reported[] = []
  const monitor = new ProductionMonitor(machine, (event) => events.push(event as Reported), { random: seededRandom(seed), ...options })
  const count = monitor.reportHistory(hours)
  return { now: clock.now() / 1000, events, count, of: <K extends Reported['kind']>(kind: K) => events.filter((e): e is Extract<Reported, { kind: K }> => e.kind === kind) }
}

describe('simulated production history (fleetgate demo)', () => {
  it('reports jobs with placements by feeder and nozzle over the hours before now, every event valid and in the past', () => {
    const h = history(12)
    expect(h.count).toBe(h.events.length)
    for (const event of h.events) {
      expect(productionEventError({ ...event, id: 'x' } as unknown as Record<string, unknown>)).toBeUndefined()
      expect(event.ts).toBeGreaterThanOrEqual(h.now - 12 * 3600)
      expect(event.ts).toBeLessThan(h.now)
    }
    // In `ts` order, ending idle.
    expect(h.events.map((e) => e.ts)).toEqual([...h.events.map((e) => e.ts)].sort((a, b) => a - b))
    expect(h.events.at(-1)).toMatchObject({ kind: 'state', state: 'standby', reason: 'no_product' })
    // Bounded: 10-minute placements, a handful of jobs.
    expect(h.events.length).toBeLessThan(300)
    const jobs = h.of('job_started').map((j) => j.job_id)
    expect(jobs.length).toBeGreaterThanOrEqual(4)
    expect(h.of('job_ended').map((j) => j.job_id)).toEqual(jobs)
    const placements = h.of('placements')
    const placed = placements.reduce((n, p) => n + p.placed, 0)
    // Most of 12 hours placing at 32,400 parts an hour.
    expect(placed).toBeGreaterThan(150_000)
    expect(placed).toBeLessThan(12 * 32_400)
    for (const p of placements) {
      expect(jobs).toContain(p.job_id)
      expect(p.feeders!.reduce((n, f) => n + f.placed, 0)).toBe(p.placed)
      expect(p.nozzles!.reduce((n, f) => n + f.missed, 0)).toBe(p.missed)
    }
    const states = new Set(h.of('state').map((s) => `${s.state}/${s.reason ?? ''}`))
    expect(states).toEqual(new Set(['standby/setup', 'productive/', 'unscheduled_down/parts_exhausted', 'standby/no_product']))
    expect(h.of('fault').every((f) => f.fault === 'parts_exhausted')).toBe(true)
  })

  it('reports nothing at or after now, whatever the draws (a stop in the last job included)', () => {
    for (let seed = 1; seed <= 50; seed++) {
      const h = history(12, {}, seed)
      expect(Math.max(...h.events.map((e) => e.ts))).toBeLessThan(h.now)
    }
  })

  it('misses at the machine’s rate, and a bad feeder at its own', () => {
    const h = history(8, { missRate: 0.003, badFeeders: [{ feeder: 'F3', rate: 0.05 }] })
    const byFeeder = new Map<string, { placed: number; missed: number }>()
    for (const p of h.of('placements')) {
      for (const f of p.feeders!) {
        const c = byFeeder.get(f.feeder) ?? { placed: 0, missed: 0 }
        byFeeder.set(f.feeder, { placed: c.placed + f.placed, missed: c.missed + f.missed })
      }
    }
    const rate = (c: { placed: number; missed: number }) => c.missed / (c.placed + c.missed)
    expect(rate(byFeeder.get('F3')!)).toBeGreaterThan(0.04)
    expect(rate(byFeeder.get('F3')!)).toBeLessThan(0.06)
    const others = [...byFeeder].filter(([f]) => f !== 'F3').map(([, c]) => c)
    expect(rate({ placed: others.reduce((n, c) => n + c.placed, 0), missed: others.reduce((n, c) => n + c.missed, 0) })).toBeLessThan(0.006)
  })
})
