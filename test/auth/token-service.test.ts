import { afterEach, describe, expect, it, vi } from 'vitest'
import { CLOCK_SKEW_S, TokenService } from '../../src/auth/token-service.js'

const alice = { id: 'alice', username: 'alice', display_name: 'Alice', role: 'user' as const }
const bob = { id: 'bob', username: 'bob', display_name: 'Bob', role: 'admin' as const }

describe('token service memory of verified tokens', () => {
  afterEach(() => vi.useRealTimers())

  it('answers each token from memory with its own claims, and none once it expired', async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    const tokens = new TokenService('a-secret-of-enough-length-for-hs256', 1)
    const [a, b] = [(await tokens.sign(alice)).token, (await tokens.sign(bob)).token]
    expect(tokens.alreadyVerified(a)).toBeUndefined()
    await tokens.verify(a)
    await tokens.verify(b)
    // Alternating, so each lookup meets the other token as the one found last.
    for (let i = 0; i < 3; i++) {
      expect(tokens.alreadyVerified(a)).toMatchObject({ sub: 'alice', username: 'alice', role: 'user' })
      expect(tokens.alreadyVerified(b)).toMatchObject({ sub: 'bob', username: 'bob', role: 'admin' })
    }
    expect(tokens.alreadyVerified(`${a}x`)).toBeUndefined()
    expect(tokens.alreadyVerified(a.slice(0, -1))).toBeUndefined()
    vi.setSystemTime(Date.now() + (3600 + CLOCK_SKEW_S + 1) * 1000)
    expect(tokens.alreadyVerified(a)).toBeUndefined()
    expect(tokens.alreadyVerified(b)).toBeUndefined()
    await expect(tokens.verify(a)).rejects.toMatchObject({ code: 'unauthorized' })
  })
})
