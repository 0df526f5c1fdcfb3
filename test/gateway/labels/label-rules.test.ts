import { describe, expect, it } from 'vitest'
import {
  isLabelKey,
  isLabelValue,
  labelChangesProblem,
  labelProblemMessage,
  labelsProblem,
  LABEL_KEY_PATTERN,
  LABEL_VALUE_PATTERN,
} from '../../../src/gateway/labels/label-rules.js'

const GOOD_KEYS = ['a', '0', 'zone', 'app.kubernetes.io/name', 'a-b_c.d/e', `a${'-'.repeat(61)}9`, 'constructor']
const BAD_KEYS = ['', 'A', 'Zone', '-a', 'a-', '.a', 'a/', '_a', 'a b', 'a=b', 'ключ', `a${'b'.repeat(63)}`, 'a\u0000']
const GOOD_VALUES = ['', 'x', 'X', '-', '.', '_', '1.2.3', 'EU_west-2', 'V'.repeat(63)]
const BAD_VALUES = ['a b', 'a/b', 'a,b', '"a"', 'é', 'V'.repeat(64), 'a\n']

describe('label rules', () => {
  it.each(GOOD_KEYS)('accepts the key %j', (key) => expect(isLabelKey(key)).toBe(true))
  it.each(BAD_KEYS)('rejects the key %j', (key) => expect(isLabelKey(key)).toBe(false))
  it.each(GOOD_VALUES)('accepts the value %j', (value) => expect(isLabelValue(value)).toBe(true))
  it.each(BAD_VALUES)('rejects the value %j', (value) => expect(isLabelValue(value)).toBe(false))

  it('offers the same rules as patterns (for TypeBox)', () => {
    for (const key of [...GOOD_KEYS, ...BAD_KEYS]) expect(new RegExp(LABEL_KEY_PATTERN).test(key)).toBe(isLabelKey(key))
    for (const value of [...GOOD_VALUES, ...BAD_VALUES]) expect(new RegExp(LABEL_VALUE_PATTERN).test(value)).toBe(isLabelValue(value))
  })

  it('names the key at fault in a set of labels', () => {
    expect(labelsProblem({ zone: 'eu', 'Bad Key': 'x' })).toEqual({ kind: 'badKey', key: 'Bad Key' })
    expect(labelsProblem({ zone: 'eu west' })).toEqual({ kind: 'badValue', key: 'zone' })
    expect(labelsProblem({ zone: 5 })).toEqual({ kind: 'badValue', key: 'zone' })
    expect(labelsProblem({ zone: null })).toEqual({ kind: 'badValue', key: 'zone' })
    expect(labelsProblem({ zone: 'eu', empty: '' })).toBeUndefined()
    expect(labelProblemMessage({ kind: 'badKey', key: 'Bad Key' })).toContain('"Bad Key"')
    expect(labelProblemMessage({ kind: 'badValue', key: 'zone' })).toContain('"zone"')
  })

  it('allows 32 labels, not 33', () => {
    const labels = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 'v']))
    expect(labelsProblem(labels(32))).toBeUndefined()
    expect(labelsProblem(labels(33))).toEqual({ kind: 'tooMany', count: 33, max: 32 })
    expect(labelProblemMessage({ kind: 'tooMany', count: 33, max: 32 })).toContain('32')
  })

  it('lets a merge remove a key with null, and checks its keys all the same', () => {
    expect(labelChangesProblem({ zone: null, team: 'a' })).toBeUndefined()
    expect(labelChangesProblem({ Zone: null })).toEqual({ kind: 'badKey', key: 'Zone' })
    expect(labelChangesProblem({ zone: 7 })).toEqual({ kind: 'badValue', key: 'zone' })
  })
})
