import type { FastifyRequest } from 'fastify'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { ShutdownDrain } from '../../src/http/shutdown-drain.js'

/** A /readyz request as the drain sees it: the peer's address, and whether a proxy passed it on. */
const ask = (peer: string, headers: Record<string, string> = {}) => ({ socket: { remoteAddress: peer }, headers }) as unknown as FastifyRequest

describe('the drain between SIGTERM and the listener closing', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it('does nothing when no drain is configured: /readyz is never "draining" and the drain is over at once', async () => {
    const drain = new ShutdownDrain({ maxMs: 0, checks: 3 })
    expect(drain.readinessAsked(ask('10.0.0.5'))).toBe(false)
    expect(await drain.drain()).toBe('none')
    expect(drain.readinessAsked(ask('10.0.0.5'))).toBe(false)
  })

  it('ends once every health checker seen before the SIGTERM has had `checks` "draining" answers', async () => {
    const drain = new ShutdownDrain({ maxMs: 60_000, checks: 3 })
    expect(drain.readinessAsked(ask('10.0.0.5'))).toBe(false)
    expect(drain.readinessAsked(ask('10.0.0.6'))).toBe(false)
    let heard: string[] = []
    let ended: string | undefined
    const over = drain.drain((checkers) => (heard = checkers)).then((end) => (ended = end))
    expect(heard).toEqual(['10.0.0.5', '10.0.0.6'])
    expect(drain.isDraining).toBe(true)
    for (let i = 0; i < 3; i++) expect(drain.readinessAsked(ask('10.0.0.5'))).toBe(true)
    // A client's /readyz passed on by a proxy, or a peer never seen before: answered "draining", not counted.
    expect(drain.readinessAsked(ask('10.0.0.6', { 'x-forwarded-for': '203.0.113.9' }))).toBe(true)
    expect(drain.readinessAsked(ask('10.0.0.6', { forwarded: 'for=203.0.113.9' }))).toBe(true)
    expect(drain.readinessAsked(ask('10.0.0.7'))).toBe(true)
    expect(drain.readinessAsked(ask('10.0.0.6'))).toBe(true)
    expect(drain.readinessAsked(ask('10.0.0.6'))).toBe(true)
    await Promise.resolve()
    expect(ended).toBeUndefined()
    expect(drain.readinessAsked(ask('10.0.0.6'))).toBe(true)
    expect(await over).toBe('checked')
    expect(drain.end).toBe('checked')
  })

  it('forgets a checker silent for longer than the drain may last, and waits the whole drain when it knows none', async () => {
    vi.useFakeTimers()
    const drain = new ShutdownDrain({ maxMs: 5000, checks: 2 })
    drain.readinessAsked(ask('10.0.0.5'))
    vi.advanceTimersByTime(6000)
    // Another peer asking prunes the one gone quiet.
    drain.readinessAsked(ask('10.0.0.6'))
    vi.advanceTimersByTime(5001)
    let heard: string[] | undefined
    let ended: string | undefined
    const over = drain.drain((checkers) => (heard = checkers)).then((end) => (ended = end))
    expect(heard).toEqual([])
    for (let i = 0; i < 5; i++) drain.readinessAsked(ask('10.0.0.5'))
    await vi.advanceTimersByTimeAsync(4999)
    expect(ended).toBeUndefined()
    await vi.advanceTimersByTimeAsync(1)
    expect(await over).toBe('time')
  })

  it('ends after its time limit when a checker it waits for went away', async () => {
    vi.useFakeTimers()
    const drain = new ShutdownDrain({ maxMs: 2000, checks: 3 })
    drain.readinessAsked(ask('10.0.0.5'))
    drain.readinessAsked(ask('10.0.0.6'))
    const over = drain.drain()
    for (let i = 0; i < 3; i++) drain.readinessAsked(ask('10.0.0.5'))
    await vi.advanceTimersByTimeAsync(2000)
    expect(await over).toBe('time')
  })
})
