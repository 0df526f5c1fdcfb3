import { describe, expect, it } from 'vitest'
import { ANSWER_HOLD_MS, answeredState, reportedState, shownState } from './switch-state'

describe('what a switch shows', () => {
  it('is what the heartbeat reports, and unknown while it reports nothing for the switch', () => {
    expect(reportedState({ pump: true, valve: false }, 'pump')).toBe(true)
    expect(reportedState({ pump: true, valve: false }, 'valve')).toBe(false)
    expect(reportedState({ pump: true }, 'light')).toBeUndefined()
    expect(reportedState({ light: 'on' }, 'light')).toBeUndefined()
    expect(reportedState({ light: { state: true, brightness: 9 } }, 'light')).toBe(true)
    expect(reportedState(undefined, 'pump')).toBeUndefined()
  })

  it('reads the state from an answer to a set only when the answer says it', () => {
    expect(answeredState({ pump: true, vacuum_kpa: -62 }, 'pump')).toBe(true)
    expect(answeredState({ light: { state: false, brightness: 0 } }, 'light')).toBe(false)
    expect(answeredState({ state: false, note: 'released' }, 'valve')).toBe(false)
    expect(answeredState('done', 'valve')).toBeUndefined()
    expect(answeredState({ ok: true }, 'pump')).toBeUndefined()
  })

  it('keeps the answer until a newer heartbeat arrives, whichever it says', () => {
    const before = { pump: false, uptime_s: 10 }
    const answer = { state: true, status: before, lastHeartbeat: 100, at: 50_000 }
    const later = 50_000 + ANSWER_HOLD_MS
    // The overview refetched with the same heartbeat keeps the same status object (structural sharing).
    expect(shownState(before, 100, 'pump', answer, later + 60_000)).toBe(true)
    // A new heartbeat from the event stream: a new status object.
    expect(shownState({ pump: false, uptime_s: 11 }, 100, 'pump', answer, later)).toBe(false)
    // A later heartbeat seen by an overview refetch.
    expect(shownState(before, 115, 'pump', answer, later)).toBe(false)
    expect(shownState({}, null, 'pump', undefined, later)).toBeUndefined()
  })

  it('does not let a heartbeat that may have left the machine before the set undo its answer', () => {
    const answer = { state: true, status: { pump: false, uptime_s: 10 }, lastHeartbeat: 100, at: 50_000 }
    expect(shownState({ pump: false, uptime_s: 11 }, 100, 'pump', answer, 50_000 + ANSWER_HOLD_MS - 1)).toBe(true)
  })
})
