import { describe, expect, it } from 'vitest'
import { MIN_PRUNE_BATCH, MIN_PRUNE_PAUSE_MS, PRUNE_BATCH, PRUNE_BATCH_TARGET_MS, PrunePacer, nextBatchSize } from '../../src/storage/prune-pacer.js'

describe('prune pacing', () => {
  it('sizes the next batch so it takes about the target time', () => {
    expect(nextBatchSize(1000, 3 * PRUNE_BATCH_TARGET_MS)).toBe(333)
    expect(nextBatchSize(400, PRUNE_BATCH_TARGET_MS)).toBe(400)
  })

  it('at most doubles a batch, never goes above the largest or below the smallest', () => {
    expect(nextBatchSize(100, PRUNE_BATCH_TARGET_MS / 10)).toBe(200)
    expect(nextBatchSize(800, 0)).toBe(PRUNE_BATCH)
    expect(nextBatchSize(100, 1000 * PRUNE_BATCH_TARGET_MS)).toBe(MIN_PRUNE_BATCH)
  })

  it('starts at the largest batch, rests after one, and answers false once stopped', async () => {
    const abort = new AbortController()
    const pacer = new PrunePacer(abort.signal)
    expect(pacer.size).toBe(PRUNE_BATCH)
    const started = performance.now()
    expect(await pacer.rest(started)).toBe(true)
    expect(performance.now() - started).toBeGreaterThanOrEqual(MIN_PRUNE_PAUSE_MS - 1)
    const resting = pacer.rest(performance.now())
    abort.abort()
    expect(await resting).toBe(false)
    expect(pacer.stopped).toBe(true)
  })
})
