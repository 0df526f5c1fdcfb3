import { describe, expect, it } from 'vitest'
import { PeriodicTask } from '../../src/lib/periodic-task.js'

/** A pass that stays running until the test lets it finish. */
function heldPass() {
  let started = 0
  let release: () => void = () => undefined
  let signal: AbortSignal | undefined
  const pass = (s: AbortSignal) => {
    started++
    signal = s
    return new Promise<void>((resolve) => (release = resolve))
  }
  return { pass, started: () => started, release: () => release(), signal: () => signal }
}

describe('PeriodicTask', () => {
  it('never starts a pass while the previous one runs', async () => {
    const held = heldPass()
    const task = new PeriodicTask(held.pass, () => undefined)
    task.start(2, { immediately: true })
    expect(held.started()).toBe(1)
    // Many ticks go by while the first pass is held: none starts a second one.
    await new Promise((resolve) => setTimeout(resolve, 30))
    expect(held.started()).toBe(1)
    held.release()
    await expect.poll(held.started).toBe(2)
    held.release()
    await task.stop()
  })

  it('stop aborts the running pass and resolves only once it ended', async () => {
    const held = heldPass()
    const task = new PeriodicTask(held.pass, () => undefined)
    task.start(1000, { immediately: true })
    let stopped = false
    const stopping = task.stop().then(() => (stopped = true))
    expect(held.signal()?.aborted).toBe(true)
    await Promise.resolve()
    expect(stopped).toBe(false)
    held.release()
    await stopping
    expect(stopped).toBe(true)
  })

  it('reports a failed pass and goes on with the next', async () => {
    const errors: unknown[] = []
    let passes = 0
    const task = new PeriodicTask(
      async () => {
        passes++
        if (passes === 1) throw new Error('database unreachable')
      },
      (err) => errors.push(err),
    )
    task.start(2, { immediately: true })
    await expect.poll(() => passes).toBeGreaterThanOrEqual(2)
    await task.stop()
    expect(errors).toHaveLength(1)
    expect((errors[0] as Error).message).toBe('database unreachable')
  })

  it('starts no pass after stop', async () => {
    let passes = 0
    const task = new PeriodicTask(async () => void passes++, () => undefined)
    await task.stop()
    task.start(1, { immediately: true })
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(passes).toBe(0)
  })
})
