import { afterEach, describe, expect, it, vi } from 'vitest'
import { CallBatcher, CallExpired } from '../../src/lib/call-batcher.js'

/** A backend that records each batch it gets and answers when the test says. */
function recordingBackend() {
  const batches: number[][] = []
  const finishers: (() => void)[] = []
  const run = (inputs: number[]) => {
    batches.push(inputs)
    return new Promise<number[]>((resolve) => finishers.push(() => resolve(inputs.map((n) => n * 10))))
  }
  return { batches, finishers, run }
}

const turn = () => new Promise((resolve) => setImmediate(resolve))
/** Long enough for a finished batch to start the next (its bookkeeping takes a turn of its own). */
const turns = async () => {
  await turn()
  await turn()
}

describe('CallBatcher', () => {
  it('sends the calls of one turn together and answers each at its position', async () => {
    const backend = recordingBackend()
    const batcher = new CallBatcher(backend.run, { maxBatch: 100, concurrency: 1 })
    const answers = Promise.all([1, 2, 3].map((n) => batcher.call(n)))
    await turn()
    expect(backend.batches).toEqual([[1, 2, 3]])
    backend.finishers[0]!()
    expect(await answers).toEqual([10, 20, 30])
  })

  it('gathers the calls made while a batch runs for the next one, and never runs more batches at once than allowed', async () => {
    const backend = recordingBackend()
    const batcher = new CallBatcher(backend.run, { maxBatch: 100, concurrency: 1 })
    const first = batcher.call(1)
    await turn()
    const later = [2, 3, 4].map((n) => batcher.call(n))
    await turn()
    expect(backend.batches).toEqual([[1]])
    backend.finishers[0]!()
    expect(await first).toBe(10)
    await turns()
    expect(backend.batches).toEqual([[1], [2, 3, 4]])
    backend.finishers[1]!()
    expect(await Promise.all(later)).toEqual([20, 30, 40])
  })

  it('splits a turn of many calls into batches of at most maxBatch, running up to concurrency at once', async () => {
    const backend = recordingBackend()
    const batcher = new CallBatcher(backend.run, { maxBatch: 2, concurrency: 2 })
    const answers = Promise.all([1, 2, 3, 4, 5].map((n) => batcher.call(n)))
    await turn()
    expect(backend.batches).toEqual([
      [1, 2],
      [3, 4],
    ])
    backend.finishers[0]!()
    await turns()
    expect(backend.batches).toEqual([[1, 2], [3, 4], [5]])
    backend.finishers[1]!()
    backend.finishers[2]!()
    expect(await answers).toEqual([10, 20, 30, 40, 50])
  })

  it('fails every call of a batch whose run fails, and later batches still run', async () => {
    let fail = true
    const batcher = new CallBatcher(async (inputs: number[]) => {
      if (fail) throw new Error('database unreachable')
      return inputs
    }, { maxBatch: 10, concurrency: 1 })
    const failed = await Promise.allSettled([batcher.call(1), batcher.call(2)])
    expect(failed.map((r) => r.status === 'rejected' && (r.reason as Error).message)).toEqual(['database unreachable', 'database unreachable'])
    fail = false
    expect(await batcher.call(3)).toBe(3)
  })

  it('fails the calls of a batch answered with the wrong number of answers', async () => {
    const batcher = new CallBatcher(async (inputs: number[]) => inputs.slice(1), { maxBatch: 10, concurrency: 1 })
    await expect(Promise.all([batcher.call(1), batcher.call(2)])).rejects.toThrow('a batch of 2 calls got 1 answers')
  })

  it('never runs a call whose deadline passed while it waited, and tells a batch the earliest deadline of its calls', async () => {
    const seen: { inputs: number[]; deadline: number }[] = []
    let finishFirst!: () => void
    const batcher = new CallBatcher(
      async (inputs: number[], batch) => {
        seen.push({ inputs, deadline: batch.deadline })
        if (inputs[0] === 1) await new Promise<void>((resolve) => (finishFirst = resolve))
        return inputs
      },
      { maxBatch: 10, concurrency: 1 },
    )
    const first = batcher.call(1)
    await new Promise((resolve) => setImmediate(resolve))
    const now = performance.now()
    const expired = batcher.call(2, now + 1)
    const kept = batcher.call(3, now + 60_000)
    const unbounded = batcher.call(4)
    await new Promise((resolve) => setTimeout(resolve, 5))
    finishFirst()
    await expect(expired).rejects.toBeInstanceOf(CallExpired)
    expect(await Promise.all([first, kept, unbounded])).toEqual([1, 3, 4])
    expect(seen).toEqual([
      { inputs: [1], deadline: Infinity },
      { inputs: [3, 4], deadline: now + 60_000 },
    ])
  })

  describe('with a linger', () => {
    afterEach(() => vi.useRealTimers())
    const fakeClock = () => vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'performance'] })

    it('waits up to lingerMs after its oldest call for more, then sends what came as one batch', async () => {
      fakeClock()
      const backend = recordingBackend()
      const batcher = new CallBatcher(backend.run, { maxBatch: 100, concurrency: 1, lingerMs: 50 })
      const answers = [batcher.call(1)]
      await vi.advanceTimersByTimeAsync(20)
      answers.push(batcher.call(2))
      await vi.advanceTimersByTimeAsync(29)
      answers.push(batcher.call(3))
      expect(backend.batches).toEqual([])
      await vi.advanceTimersByTimeAsync(1)
      expect(backend.batches).toEqual([[1, 2, 3]])
      backend.finishers[0]!()
      expect(await Promise.all(answers)).toEqual([10, 20, 30])
    })

    it('starts a batch at once when it is full, and the rest waits out its own linger', async () => {
      fakeClock()
      const backend = recordingBackend()
      const batcher = new CallBatcher(backend.run, { maxBatch: 2, concurrency: 2, lingerMs: 50 })
      const answers = [batcher.call(1)]
      await vi.advanceTimersByTimeAsync(10)
      answers.push(batcher.call(2), batcher.call(3))
      await vi.advanceTimersByTimeAsync(0)
      expect(backend.batches).toEqual([[1, 2]])
      await vi.advanceTimersByTimeAsync(49)
      expect(backend.batches).toEqual([[1, 2]])
      await vi.advanceTimersByTimeAsync(1)
      expect(backend.batches).toEqual([[1, 2], [3]])
      for (const finish of backend.finishers) finish()
      expect(await Promise.all(answers)).toEqual([10, 20, 30])
    })

    it('sends the calls that lingered long enough behind a running batch as soon as it ends', async () => {
      fakeClock()
      const backend = recordingBackend()
      const batcher = new CallBatcher(backend.run, { maxBatch: 100, concurrency: 1, lingerMs: 50 })
      const first = batcher.call(1)
      await vi.advanceTimersByTimeAsync(50)
      expect(backend.batches).toEqual([[1]])
      const later = [batcher.call(2), batcher.call(3)]
      await vi.advanceTimersByTimeAsync(100)
      expect(backend.batches).toEqual([[1]])
      backend.finishers[0]!()
      await vi.advanceTimersByTimeAsync(0)
      expect(backend.batches).toEqual([[1], [2, 3]])
      backend.finishers[1]!()
      expect(await Promise.all([first, ...later])).toEqual([10, 20, 30])
    })
  })
})
