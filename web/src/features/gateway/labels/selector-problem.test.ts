import { describe, expect, it } from 'vitest'
import { ApiError } from '../../../api/api-error'
import { selectorProblemOf, splitAtProblem } from './selector-problem'

describe('selector problems', () => {
  it('reads the server’s invalid_selector message and position, and nothing else', () => {
    const error = new ApiError(400, 'invalid_selector', "expected ')' at position 12", { error: 'invalid_selector', position: 12 })
    expect(selectorProblemOf(error)).toEqual({ message: "expected ')' at position 12", position: 12 })
    expect(selectorProblemOf(new ApiError(400, 'invalid_selector', 'bad', {}))).toEqual({ message: 'bad', position: null })
    expect(selectorProblemOf(new ApiError(400, 'bad_request', 'bad', { position: 1 }))).toBeNull()
    expect(selectorProblemOf(new Error('network'))).toBeNull()
    expect(selectorProblemOf(null)).toBeNull()
  })

  it('cuts the selector where it went wrong, a space past its end', () => {
    expect(splitAtProblem('site in (a', 5)).toEqual(['site ', 'i', 'n (a'])
    expect(splitAtProblem('site in (a', 10)).toEqual(['site in (a', ' ', ''])
    expect(splitAtProblem('a', 99)).toEqual(['a', ' ', ''])
  })
})
