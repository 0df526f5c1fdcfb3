import { describe, expect, it } from 'vitest'
import {
  ENDED_STATES,
  IN_PROGRESS_STATES,
  MACHINE_STATES,
  MACHINE_TRANSITIONS,
  machineStatesLeadingTo,
  machineTransition,
  reportTransition,
  ROLLOUT_TRANSITIONS,
  rolloutTransition,
} from '../../../src/gateway/rollouts/rollout-states.js'

/**
 * Issue #32, item 4: the rollout and machine state machines are one table each, and a transition
 * the table does not allow does not compile (`npm test` type-checks this file first: each
 * `@ts-expect-error` below fails the build when the line it marks compiles).
 */
describe('rollout state transitions', () => {
  it('refuses, at compile time, a transition the tables do not allow', () => {
    // @ts-expect-error a completed rollout never runs again
    rolloutTransition(['completed'], 'running')
    // @ts-expect-error a paused rollout cannot complete without running
    rolloutTransition(['running', 'paused'], 'completed')
    // @ts-expect-error a waiting machine is offered before it installs
    machineTransition(['waiting'], 'installed')
    // @ts-expect-error a failed machine stays failed
    machineTransition(['failed'], 'waiting')
    // @ts-expect-error pending machines cannot fail: they were never offered
    machineTransition(['pending', 'offered'], 'failed')
    expect(machineTransition(['offered', 'downloading', 'installing'], 'failed')).toEqual({ from: ['offered', 'downloading', 'installing'], to: 'failed' })
    expect(rolloutTransition(['running', 'paused'], 'aborted')).toEqual({ from: ['running', 'paused'], to: 'aborted' })
  })

  it('ends a rollout in completed or aborted, and a machine in installed or failed, with no way out', () => {
    expect(Object.entries(ROLLOUT_TRANSITIONS).filter(([, next]) => next.length === 0).map(([state]) => state)).toEqual(['completed', 'aborted'])
    expect(ENDED_STATES).toEqual(['installed', 'failed'])
    expect(IN_PROGRESS_STATES).toEqual(['offered', 'downloading', 'installing'])
  })

  it('lets every machine state be reached from pending', () => {
    const reached = new Set<string>(['pending'])
    for (let changed = true; changed; ) {
      changed = false
      for (const from of reached) for (const to of MACHINE_TRANSITIONS[from as keyof typeof MACHINE_TRANSITIONS]) if (!reached.has(to)) changed = reached.add(to) !== undefined
    }
    expect([...reached].sort()).toEqual([...MACHINE_STATES].sort())
  })

  it('takes a report only from an offered state that may lead to it: never from pending or waiting, nor after the install ended', () => {
    for (const state of ['downloading', 'installing', 'installed', 'failed'] as const) {
      const { from } = reportTransition(state)
      expect(from.length).toBeGreaterThan(0)
      expect(from.every((s) => IN_PROGRESS_STATES.includes(s))).toBe(true)
      expect(from).not.toContain('waiting')
    }
    expect(reportTransition('waiting').from).toEqual(['offered'])
    expect(reportTransition('downloading').from).toEqual(['offered', 'downloading'])
    expect(machineStatesLeadingTo('waiting')).toEqual(['pending', 'offered'])
  })
})
