import { describe, expect, it } from 'vitest'
import { withTimeout } from '../../src/lib/time.js'

describe('withTimeout', () => {
  it('settles as the promise does when it is in time', async () => {
    await expect(withTimeout(Promise.resolve(7), 1000)).resolves.toBe(7)
    await expect(withTimeout(Promise.reject(new Error('own failure')), 1000)).rejects.toThrow('own failure')
  })

  it('rejects with the given message once the time is up, and says how long it waited by default', async () => {
    const never = new Promise<never>(() => undefined)
    await expect(withTimeout(never, 5, 'claim not decided')).rejects.toThrow('claim not decided')
    await expect(withTimeout(never, 5)).rejects.toThrow('no answer within 5 ms')
  })
})
