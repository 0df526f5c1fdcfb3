import { describe, expect, it } from 'vitest'
import { ConcurrencyGate } from '../../src/lib/concurrency-gate.js'

describe('ConcurrencyGate', () => {
  it('runs at most `limit` tasks, queues `maxQueued` in order and refuses the rest without running them', async () => {
    const gate = new ConcurrencyGate(2, 1, () => new Error('full'))
    const releases: (() => void)[] = []
    const order: number[] = []
    const task = (n: number) => () =>
      new Promise<number>((resolve) => {
        order.push(n)
        releases.push(() => resolve(n))
      })
    const runs = [1, 2, 3].map((n) => gate.run(task(n)))
    expect(gate.active).toBe(2)
    expect(gate.queued).toBe(1)
    expect(gate.full).toBe(true)
    let ranFourth = false
    await expect(gate.run(async () => (ranFourth = true))).rejects.toThrow('full')
    expect(ranFourth).toBe(false)
    await Promise.resolve()
    expect(order).toEqual([1, 2])
    releases[0]!()
    await runs[0]
    await new Promise((r) => setImmediate(r))
    expect(order).toEqual([1, 2, 3])
    expect(gate.active).toBe(2)
    expect(gate.queued).toBe(0)
    releases[1]!()
    releases[2]!()
    expect(await Promise.all(runs)).toEqual([1, 2, 3])
    expect(gate.active).toBe(0)
  })

  it('frees the turn of a task that fails', async () => {
    const gate = new ConcurrencyGate(1, 0, () => new Error('full'))
    await expect(gate.run(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom')
    expect(await gate.run(async () => 'ok')).toBe('ok')
  })
})
