import { describe, expect, it } from 'vitest'
import { elapsedSeconds, readTask } from './read-task'

describe('reading a task answer', () => {
  it('reads the reference machine’s task, its absence, and nothing from shapes it does not know', () => {
    expect(readTask({ task: { id: 't', state: 'running', placed: 2, total: 5, started_at: 100, finished_at: null } })).toEqual({
      shape: 'task',
      state: 'running',
      placed: 2,
      total: 5,
      startedAt: 100,
      finishedAt: undefined,
    })
    expect(readTask({ task: null })).toEqual({ shape: 'none' })
    expect(readTask({ job: 'J-7', progress: 0.4 })).toEqual({ shape: 'unknown' })
    expect(readTask({ task: { job: 'J-7' } })).toEqual({ shape: 'unknown' })
    expect(readTask('idle')).toEqual({ shape: 'unknown' })
  })

  it('counts elapsed time to now while the task runs or is paused, and to its end after', () => {
    expect(elapsedSeconds(readTask({ task: { state: 'running', started_at: 100 } }), 165)).toBe(65)
    expect(elapsedSeconds(readTask({ task: { state: 'paused', started_at: 100 } }), 165)).toBe(65)
    expect(elapsedSeconds(readTask({ task: { state: 'done', started_at: 100, finished_at: 130 } }), 165)).toBe(30)
    expect(elapsedSeconds(readTask({ task: { state: 'stopped', started_at: 100 } }), 165)).toBeUndefined()
    expect(elapsedSeconds(readTask({ task: { state: 'running' } }), 165)).toBeUndefined()
  })
})
