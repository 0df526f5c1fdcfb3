import { afterEach, describe, expect, it } from 'vitest'
import type { ProductionEventInput } from '@fleetgate/device-agent'
import { parseSimArguments, startSimulation, type Simulation } from '../../src/cli/sim-command.js'
import { AutoJobs, demoBoard } from '../../src/sim/production/auto-jobs.js'
import { MissModel, parseBadFeeders } from '../../src/sim/production/miss-model.js'
import { ProductionMonitor, type ProductionMonitorOptions } from '../../src/sim/production/production-monitor.js'
import { seededRandom } from '../../src/sim/production/seeded-random.js'
import { FakeGateway } from '../sdk/fake-gateway.js'
import { testMachine } from './machine-helpers.js'

type Reported = ProductionEventInput & { ts: number }

/** A machine on a manual clock whose production events are collected. */
function watchedMachine(options: ProductionMonitorOptions = {}) {
  const { clock, machine, call } = testMachine({ placeMsPerItem: 400 })
  const events: Reported[] = []
  const monitor = new ProductionMonitor(machine, (event) => events.push(event as Reported), { random: seededRandom(7), ...options }).start(0)
  /** Moves the clock in 1 s ticks, as the simulator's timer does. */
  const run = (ms: number) => {
    for (let t = 0; t < ms; t += 1000) {
      clock.advance(Math.min(1000, ms - t))
      monitor.tick()
    }
  }
  const startBoard = async () => {
    const order = await call('POST', '/orders', { name: 'demo board', items: demoBoard(), settings: {} })
    return (await call('POST', '/tasks/start', { order_id: order.data.order.id })).data.task
  }
  const of = <K extends Reported['kind']>(kind: K) => events.filter((e): e is Extract<Reported, { kind: K }> => e.kind === kind)
  return { clock, machine, call, events, monitor, run, startBoard, of }
}

describe('simulated machine production reporting', () => {
  it('reports standby when idle, productive while placing, the job, and standby again when it ends', async () => {
    const m = watchedMachine({ missRate: 0 })
    const t0 = m.clock.now() / 1000
    expect(m.events).toEqual([{ kind: 'state', state: 'standby', reason: 'no_product', ts: t0 }])
    const task = await m.startBoard()
    m.run(30_000)
    const [started] = m.of('job_started')
    expect(started).toEqual({ kind: 'job_started', job_id: expect.stringMatching(/^task-0001-/), order_id: task.order_id, program: 'demo board', boards_planned: 1, ts: t0 })
    // 60 parts at 400 ms: done 24 s after the start.
    expect(m.of('job_ended')).toEqual([{ kind: 'job_ended', job_id: started!.job_id, result: 'completed', boards_done: 1, ts: t0 + 24 }])
    expect(m.of('state').map(({ state, reason, ts }) => [state, reason, ts - t0])).toEqual([
      ['standby', 'no_product', 0],
      ['productive', undefined, 0],
      ['standby', 'no_product', 24],
    ])
  })

  it('reports placements per 10 s window of the machine clock, by feeder and nozzle, naming the job', async () => {
    const m = watchedMachine({ missRate: 0 })
    const t0 = m.clock.now() / 1000
    await m.startBoard()
    m.run(30_000)
    const placements = m.of('placements')
    const jobId = m.of('job_started')[0]!.job_id
    // Part k is placed at 0.4·k s. Windows [0, 10), [10, 20), [20, 24]: 24, 25 and 11 parts, each counted at its last placement.
    expect(placements.map((p) => [p.placed, p.missed, Math.round((p.ts - t0) * 1000) / 1000, p.job_id])).toEqual([
      [24, 0, 9.6, jobId],
      [25, 0, 19.6, jobId],
      [11, 0, 24, jobId],
    ])
    const feeders = new Map<string, number>()
    for (const p of placements) for (const f of p.feeders!) feeders.set(f.feeder, (feeders.get(f.feeder) ?? 0) + f.placed)
    // The demo board's parts by feeder slot of the starter library: 10k F1, 4k7 F2, 100nF F3, 10uF F4, LED F5, STM32 F6.
    expect(Object.fromEntries(feeders)).toEqual({ F1: 20, F2: 10, F3: 20, F4: 6, F5: 3, F6: 1 })
    const nozzles = placements.flatMap((p) => p.nozzles!)
    expect(new Set(nozzles.map((n) => n.nozzle))).toEqual(new Set(['N1', 'N2', 'N3', 'N4']))
    expect(nozzles.reduce((sum, n) => sum + n.placed, 0)).toBe(60)
  })

  it('goes unscheduled_down with parts_exhausted when a feeder runs empty, and productive again once refilled', async () => {
    const m = watchedMachine({ missRate: 0 })
    await m.call('PUT', '/warehouse/components/cmp-stm32', { stock: 0 })
    const t0 = m.clock.now() / 1000
    await m.startBoard()
    m.run(30_000)
    // U1, the last part, sits in the tray of slot 6: the task stops before it, 23.6 s in.
    expect((await m.call('GET', '/tasks/current')).data.task).toMatchObject({ state: 'paused', placed: 59 })
    expect(m.of('state').at(-1)).toEqual({ kind: 'state', state: 'unscheduled_down', reason: 'parts_exhausted', ts: t0 + 23.6 })
    expect(m.of('fault')).toEqual([{ kind: 'fault', fault: 'parts_exhausted', feeder: 'F6', part: 'STM32F103C8Tx', ts: t0 + 23.6 }])
    expect(m.of('job_ended')).toEqual([])

    const jobs = new AutoJobs(m.machine, { refillAfterMs: 5000, refillParts: 10 })
    jobs.tick()
    m.run(5000)
    jobs.tick()
    m.run(2000)
    expect(m.of('state').slice(-2).map((s) => s.state)).toEqual(['productive', 'standby'])
    expect(m.of('job_ended')).toMatchObject([{ result: 'completed', boards_done: 1 }])
    expect((await m.call('GET', '/warehouse/components/cmp-stm32')).data.component.stock).toBe(9)
  })

  it('reports a stopped job and a paused machine as standby', async () => {
    const m = watchedMachine({ missRate: 0 })
    await m.startBoard()
    m.run(5000)
    await m.call('POST', '/tasks/pause')
    await m.call('POST', '/tasks/resume')
    m.run(1000)
    await m.call('POST', '/tasks/stop')
    expect(m.of('state').map((s) => [s.state, s.reason])).toEqual([
      ['standby', 'no_product'],
      ['productive', undefined],
      ['standby', 'paused'],
      ['productive', undefined],
      ['standby', 'no_product'],
    ])
    expect(m.of('job_ended')).toMatchObject([{ result: 'stopped', boards_done: 0 }])
    expect(m.of('placements').reduce((sum, p) => sum + p.placed, 0)).toBe(15)
  })

  it('misses a bad feeder at its rate: a fault per miss naming feeder, nozzle, designator and part', async () => {
    const m = watchedMachine({ missRate: 0, badFeeders: [{ feeder: 'F1', rate: 0.2 }] })
    const jobs = new AutoJobs(m.machine, { firstJobAfterMs: 0, boardChangeMs: 0 })
    for (let s = 0; s < 40 * 25; s++) {
      jobs.tick()
      m.run(1000)
    }
    // Ends the job on the machine, so its last window is reported too.
    if ((await m.call('GET', '/tasks/current')).data.task.state !== 'done') await m.call('POST', '/tasks/stop')
    const byFeeder = new Map<string, { placed: number; missed: number }>()
    for (const p of m.of('placements')) {
      for (const f of p.feeders!) {
        const sum = byFeeder.get(f.feeder) ?? { placed: 0, missed: 0 }
        byFeeder.set(f.feeder, { placed: sum.placed + f.placed, missed: sum.missed + f.missed })
      }
    }
    const f1 = byFeeder.get('F1')!
    expect(f1.placed).toBeGreaterThan(700)
    const observed = f1.missed / (f1.placed + f1.missed)
    expect(observed).toBeGreaterThan(0.16)
    expect(observed).toBeLessThan(0.24)
    for (const [feeder, counts] of byFeeder) if (feeder !== 'F1') expect(counts.missed).toBe(0)
    // The STM32 tray (25 parts) runs empty on the 26th board: that fault is no miss.
    const faults = m.of('fault').filter((f) => f.fault !== 'parts_exhausted')
    expect(faults).toHaveLength(f1.missed)
    for (const fault of faults) {
      expect(['pickup_error', 'vision_error']).toContain(fault.fault)
      expect(fault).toMatchObject({ feeder: 'F1', part: '10k', nozzle: expect.stringMatching(/^N[1-4]$/), designator: expect.stringMatching(/^R\d+$/) })
    }
  })

  it('draws misses so that over many placements the observed miss rate is the rate asked for', () => {
    for (const rate of [0.003, 0.05, 0.5]) {
      const model = new MissModel(seededRandom(42), rate, new Map(), undefined)
      let missed = 0
      const placed = 200_000
      for (let i = 0; i < placed; i++) missed += model.missesFor('F1', undefined)
      expect(missed / (placed + missed)).toBeCloseTo(rate, rate < 0.01 ? 3 : 2)
    }
  })

  it('misses more after installing a firmware release named to place worse', () => {
    const model = new MissModel(seededRandom(1), 0.003, new Map([['F3', 0.05]]), { releasePrefix: 'demo-', missRate: 0.02 })
    expect(model.rate('F1', undefined)).toBe(0.003)
    expect(model.rate('F1', 'rel-2.4.0')).toBe(0.003)
    expect(model.rate('F1', 'demo-2.4.0-1')).toBe(0.02)
    expect(model.rate('F3', 'demo-2.4.0-1')).toBe(0.05)
  })
})

describe('fleetgate sim production flags', () => {
  it('reads --miss-rate, --bad-feeder (comma list or repeated), --rated-cph, --auto-jobs and --seed', () => {
    expect(parseSimArguments(['--miss-rate', '0.01', '--bad-feeder', 'F3:0.05,F7:.2', '--bad-feeder', 'F12:1', '--rated-cph', '12000', '--auto-jobs', '--seed', '9'], {})).toMatchObject({
      production: {
        missRate: 0.01,
        badFeeders: [
          { feeder: 'F3', rate: 0.05 },
          { feeder: 'F7', rate: 0.2 },
          { feeder: 'F12', rate: 1 },
        ],
        ratedCph: 12000,
        autoJobs: true,
        seed: 9,
      },
    })
    expect(parseSimArguments(['--no-production'], {})).toMatchObject({ production: null })
  })

  it('refuses bad values with a message naming the flag', () => {
    const error = (argv: string[]) => (parseSimArguments(argv, {}) as { error?: string }).error
    expect(error(['--miss-rate', '1.5'])).toMatch(/--miss-rate must be a number from 0 to 1/)
    expect(error(['--miss-rate', '-0.1'])).toMatch(/--miss-rate/)
    expect(error(['--miss-rate', 'lots'])).toMatch(/--miss-rate/)
    expect(error(['--bad-feeder', 'F3'])).toMatch(/--bad-feeder: the rate of "F3"/)
    expect(error(['--bad-feeder', 'F13:0.1'])).toMatch(/--bad-feeder: "F13:0.1" must be FEEDER:RATE with FEEDER one of F1 … F12/)
    expect(error(['--bad-feeder', 'feeder3:0.1'])).toMatch(/FEEDER one of F1/)
    expect(error(['--bad-feeder', 'F3:2'])).toMatch(/from 0 to 1/)
    expect(error(['--rated-cph', '0'])).toMatch(/--rated-cph must be a whole number 1–1000000/)
    expect(error(['--rated-cph', '4000.5'])).toMatch(/--rated-cph/)
    expect(error(['--rated-cph', '1000001'])).toMatch(/--rated-cph/)
    expect(error(['--seed', 'x'])).toMatch(/--seed/)
    expect(parseBadFeeders([' , '])).toEqual([])
  })
})

describe('fleetgate sim production over the device link', () => {
  let gateway: FakeGateway | undefined
  let simulation: Simulation | undefined
  afterEach(async () => {
    await simulation?.stop()
    await gateway?.close()
  })

  it('registers with rated_cph and reports the machine state once linked', async () => {
    gateway = await FakeGateway.start()
    simulation = await startSimulation({ url: gateway.url, devices: 1, keysFile: null, production: { ratedCph: 5000, seed: 1 } })
    const link = await gateway.nextLink()
    expect(await link.acceptRegistration()).toMatchObject({ device_id: 'pnp-01', rated_cph: 5000 })
    const frame = await link.nextFrame<{ type: string; events: Record<string, unknown>[] }>('production')
    expect(frame.events[0]).toMatchObject({ kind: 'state', state: 'standby', reason: 'no_product', id: expect.any(String), ts: expect.any(Number) })
  })

  it('refuses a bad feeder of a machine it does not simulate', async () => {
    await expect(startSimulation({ url: 'http://127.0.0.1:9', devices: 1, keysFile: null, production: { badFeeders: [{ machine: 'pnp-09', feeder: 'F1', rate: 0.1 }] } })).rejects.toThrow(/pnp-09/)
  })
})
