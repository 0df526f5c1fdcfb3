import { describe, expect, it } from 'vitest'
import { emptyHistory, HISTORY_SIZE, newer, older, remember } from './command-history'

describe('the Command box history', () => {
  it('recalls older commands with ArrowUp and comes back to what was typed with ArrowDown', () => {
    let h = remember(remember(remember(emptyHistory, '$I'), 'M114'), 'G28')
    let step = older(h, 'G0 X')
    expect(step.text).toBe('G28')
    step = older(step.history, step.text)
    expect(step.text).toBe('M114')
    step = older(step.history, step.text)
    step = older(step.history, step.text)
    expect(step.text).toBe('$I')
    step = newer(step.history, step.text)
    expect(step.text).toBe('M114')
    step = newer(step.history, step.text)
    step = newer(step.history, step.text)
    expect(step.text).toBe('G0 X')
    expect(step.history.index).toBeNull()
    h = step.history
    expect(newer(h, 'typed').text).toBe('typed')
    expect(older(emptyHistory, 'typed').text).toBe('typed')
  })

  it('does not keep a command twice in a row, and keeps only the newest ones', () => {
    expect(remember(remember(emptyHistory, '?'), '?').entries).toEqual(['?'])
    let h = emptyHistory
    for (let i = 0; i < HISTORY_SIZE + 5; i++) h = remember(h, `G0 X${i}`)
    expect(h.entries).toHaveLength(HISTORY_SIZE)
    expect(h.entries.at(-1)).toBe(`G0 X${HISTORY_SIZE + 4}`)
  })
})
