import { describe, expect, it } from 'vitest'
import { parseFailureRatio, parseStages } from './rollout-form'

describe('the Stages text of "Start rollout"', () => {
  it('reads comma-separated percentages', () => {
    expect(parseStages('10, 50, 100')).toEqual({ ok: true, value: [10, 50, 100] })
    expect(parseStages('100')).toEqual({ ok: true, value: [100] })
  })

  it('accepts spaces, semicolons, Chinese commas and a % after each number', () => {
    expect(parseStages(' 5  25 100 ')).toEqual({ ok: true, value: [5, 25, 100] })
    expect(parseStages('10%; 50%; 100%')).toEqual({ ok: true, value: [10, 50, 100] })
    expect(parseStages('10，50、100')).toEqual({ ok: true, value: [10, 50, 100] })
    expect(parseStages('10,,100,')).toEqual({ ok: true, value: [10, 100] })
  })

  it('refuses an empty text', () => {
    expect(parseStages('  , ')).toEqual({ ok: false, problem: { key: 'rollouts.stagesEmpty' } })
  })

  it('names the part that is not a whole number', () => {
    expect(parseStages('10, 12.5, 100')).toEqual({ ok: false, problem: { key: 'rollouts.stagesNotWhole', value: '12.5' } })
    expect(parseStages('10, half, 100')).toEqual({ ok: false, problem: { key: 'rollouts.stagesNotWhole', value: 'half' } })
    expect(parseStages('-10, 100')).toEqual({ ok: false, problem: { key: 'rollouts.stagesNotWhole', value: '-10' } })
  })

  it('keeps each percentage between 1 and 100', () => {
    expect(parseStages('0, 100')).toEqual({ ok: false, problem: { key: 'rollouts.stagesOutOfRange', value: '0' } })
    expect(parseStages('10, 150')).toEqual({ ok: false, problem: { key: 'rollouts.stagesOutOfRange', value: '150' } })
  })

  it('wants strictly ascending stages', () => {
    expect(parseStages('50, 10, 100')).toEqual({ ok: false, problem: { key: 'rollouts.stagesNotAscending', value: '10', previous: '50' } })
    expect(parseStages('10, 10, 100')).toEqual({ ok: false, problem: { key: 'rollouts.stagesNotAscending', value: '10', previous: '10' } })
  })

  it('wants the last stage to reach every machine (100)', () => {
    expect(parseStages('10, 50')).toEqual({ ok: false, problem: { key: 'rollouts.stagesLastNot100', value: '50' } })
  })

  it('allows at most 20 stages', () => {
    const twenty = Array.from({ length: 20 }, (_, i) => (i + 1) * 5)
    expect(parseStages(twenty.join(', '))).toEqual({ ok: true, value: twenty })
    expect(parseStages(['1', ...twenty.map(String)].join(','))).toEqual({ ok: false, problem: { key: 'rollouts.stagesTooMany', count: 21, max: 20 } })
  })
})

describe('the Max failure ratio text', () => {
  it('reads a number from 0 to 1', () => {
    expect(parseFailureRatio('0.1')).toEqual({ ok: true, value: 0.1 })
    expect(parseFailureRatio(' 0 ')).toEqual({ ok: true, value: 0 })
    expect(parseFailureRatio('1')).toEqual({ ok: true, value: 1 })
    expect(parseFailureRatio('.25')).toEqual({ ok: true, value: 0.25 })
  })

  it('refuses anything else', () => {
    for (const text of ['', '1.5', '-0.1', '10%', 'abc', '0x1', '1e-1']) {
      expect(parseFailureRatio(text)).toEqual({ ok: false, problem: { key: 'rollouts.ratioInvalid', value: text.trim() } })
    }
  })
})
