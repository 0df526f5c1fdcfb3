import { describe, expect, it } from 'vitest'
import { parseSelector } from '../../../src/gateway/labels/selector/parse-selector.js'
import { formatSelector, SelectorError, type Requirement } from '../../../src/gateway/labels/selector/selector-syntax.js'

const requirementsOf = (text: string) => parseSelector(text).requirements
const withoutPositions = (requirements: readonly Requirement[]) => requirements.map(({ position: _, ...rest }) => rest)

const manyRequirements = (n: number) => Array.from({ length: n }, (_, i) => `k${i}=v`).join(',')
const manyValues = (n: number) => `a in (${Array.from({ length: n }, (_, i) => `v${i}`).join(',')})`
const key63 = `a${'.'.repeat(61)}z`
const value63 = `-${'V'.repeat(61)}_`

/** Valid selectors and their canonical text. */
const VALID: [string, string][] = [
  ['', ''],
  ['   ', ''],
  [' \t\r\n ', ''],
  ['a', 'a'],
  ['!a', '!a'],
  ['a=b', 'a=b'],
  ['a==b', 'a=b'],
  ['a!=b', 'a!=b'],
  ['a in (b,c)', 'a in (b,c)'],
  ['a notin (c,b)', 'a notin (b,c)'],
  ['a in(b)', 'a in (b)'],
  ['a in (b, b, a)', 'a in (a,b)'],
  ['  a = b ,  c != d ', 'a=b,c!=d'],
  ['a\t==\nb', 'a=b'],
  ['! a', '!a'],
  ['a , b', 'a,b'],
  ['a=', 'a='],
  ['a==,b', 'a=,b'],
  ['a!=', 'a!='],
  ['a= ,!b', 'a=,!b'],
  ['in', 'in'],
  ['in in (in)', 'in in (in)'],
  ['notin notin (notin)', 'notin notin (notin)'],
  ['in=notin', 'in=notin'],
  ['0=0', '0=0'],
  ['app.kubernetes.io/name=web-1', 'app.kubernetes.io/name=web-1'],
  ['zone=EU_west.2', 'zone=EU_west.2'],
  ['a=1,a=2', 'a=1,a=2'],
  ['x!=y,!z,w', 'x!=y,!z,w'],
  ['@version=1.2.3', '@version=1.2.3'],
  ['@version', '@version'],
  ['!@version', '!@version'],
  ['@firmware in (2.0, 1.0)', '@firmware in (1.0,2.0)'],
  ['@firmware', '@firmware'],
  ['!@firmware', '!@firmware'],
  ['@firmware=', '@firmware='],
  ['@online=true', '@online=true'],
  ['@online==false', '@online=false'],
  ['@online!=false', '@online!=false'],
  ['@online in (true,false)', '@online in (false,true)'],
  ['@online notin (true)', '@online notin (true)'],
  [`${key63}=${value63}`, `${key63}=${value63}`],
  [`a${' '.repeat(4095)}`, 'a'],
  [manyRequirements(64), manyRequirements(64)],
]

/** Malformed selectors: where the fault is, and what the message says. */
const INVALID: [string, number, string][] = [
  [',', 0, "expected a label key or field at position 0, found ','"],
  ['a=b,', 4, "expected a label key or field at position 4, found end of selector"],
  ['a=b,,c=d', 4, "expected a label key or field at position 4, found ','"],
  ['(a=b)', 0, "expected a label key or field at position 0, found '('"],
  ['a in b', 5, "expected '(' at position 5, found 'b'"],
  ['a in', 4, "expected '(' at position 4, found end of selector"],
  ['a notin', 7, "expected '(' at position 7, found end of selector"],
  ['a in (', 6, 'expected a value at position 6, found end of selector'],
  ['a in ()', 6, 'empty set at position 6'],
  ['a notin ( )', 10, 'empty set at position 10'],
  ['a in (b', 7, "expected ',' or ')' at position 7, found end of selector"],
  ['a in (b,)', 8, "expected a value at position 8, found ')'"],
  ['a in (b,,c)', 8, "expected a value at position 8, found ','"],
  ['a in ((b))', 6, "expected a value at position 6, found '('"],
  ['a in (b c)', 8, "expected ',' or ')' at position 8, found 'c'"],
  ['a in (b)c', 8, "expected ',' or end of selector at position 8, found 'c'"],
  ['!a=b', 2, "'!' takes no operator or value"],
  ['!a in (b)', 3, "expected ',' or end of selector at position 3, found 'in'"],
  ['!!a', 1, "expected a label key or field at position 1, found '!'"],
  ['!', 1, 'expected a label key or field at position 1, found end of selector'],
  ['a=b c', 4, "expected ',' or end of selector at position 4, found 'c'"],
  ['a =b=c', 4, "expected ',' or end of selector at position 4, found '='"],
  ['a=b)', 3, "expected ',' or end of selector at position 3, found ')'"],
  ['a b', 2, "expected '=', '==', '!=', 'in', 'notin', ',' or end of selector at position 2, found 'b'"],
  ['a IN (b)', 2, "found 'IN'"],
  ['a!b', 1, "found '!'"],
  ['a===b', 3, "expected a value at position 3, found '='"],
  ['a=(b)', 2, "expected a value at position 2, found '('"],
  ['a=!b', 2, "expected a value at position 2, found '!'"],
  ['A=b', 0, "invalid label key 'A' at position 0"],
  ['-a=b', 0, "invalid label key '-a' at position 0"],
  ['a-=b', 0, "invalid label key 'a-' at position 0"],
  [`${key63}x=b`, 0, 'invalid label key'],
  ['x, ключ=1', 3, "invalid label key 'ключ' at position 3"],
  ['\u00a0a=b', 0, 'invalid label key'],
  ['a\u0000=b', 0, 'invalid label key'],
  ['a="b"', 2, `invalid value '"b"' at position 2`],
  ["a='b c'", 2, `invalid value ''b' at position 2`],
  ['a=b/c', 2, "invalid value 'b/c' at position 2"],
  ['a=значение', 2, 'invalid value'],
  ['a=😀', 2, 'invalid value'],
  [`a=${'v'.repeat(64)}`, 2, `invalid value '${'v'.repeat(32)}…' at position 2`],
  ['a in (b,C D)', 10, "expected ',' or ')' at position 10, found 'D'"],
  ['@foo=1', 0, "unknown field '@foo' at position 0: @version, @firmware or @online"],
  ['@Version=1', 0, "unknown field '@Version'"],
  ['@=1', 0, "unknown field '@'"],
  ['@version=1.0+build', 9, "invalid value '1.0+build' at position 9"],
  ['@online=yes', 8, "invalid value 'yes' of @online at position 8: true or false"],
  ['@online=', 8, "invalid value '' of @online at position 8"],
  ['@online in (true,maybe)', 17, "invalid value 'maybe' of @online"],
  [manyRequirements(65), manyRequirements(64).length + 1, 'more than 64 requirements'],
  [manyValues(101), manyValues(100).length, 'more than 100 values in a set'],
  [`a=b${' '.repeat(4094)}`, 4096, 'selector longer than 4096 characters at position 4096'],
  ['x'.repeat(100_000), 4096, 'selector longer than 4096 characters'],
]

describe('parseSelector', () => {
  it.each(VALID)('parses %j as %j', (text, canonical) => {
    const selector = parseSelector(text)
    expect(selector.text).toBe(text)
    expect(formatSelector(selector)).toBe(canonical)
    // The canonical text is a fixed point: it parses to the same requirements and prints as itself.
    const again = parseSelector(canonical)
    expect(withoutPositions(again.requirements)).toEqual(withoutPositions(selector.requirements))
    expect(formatSelector(again)).toBe(canonical)
  })

  it.each(INVALID)('rejects %j at position %i', (text, position, message) => {
    let error: unknown
    try {
      parseSelector(text)
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(SelectorError)
    expect((error as SelectorError).position).toBe(position)
    expect((error as SelectorError).message).toContain(message)
    expect((error as SelectorError).message).toContain(`at position ${position}`)
  })

  it('builds one requirement per operator, with subject, values and where each starts', () => {
    expect(requirementsOf(' a=b, c!=d,e in (g,f),  h notin (i) ,j,!k')).toEqual([
      { subject: { label: 'a' }, op: 'eq', values: ['b'], position: 1 },
      { subject: { label: 'c' }, op: 'neq', values: ['d'], position: 6 },
      { subject: { label: 'e' }, op: 'in', values: ['f', 'g'], position: 11 },
      { subject: { label: 'h' }, op: 'notin', values: ['i'], position: 24 },
      { subject: { label: 'j' }, op: 'exists', values: [], position: 37 },
      { subject: { label: 'k' }, op: 'absent', values: [], position: 39 },
    ])
  })

  it('tells the three fields from labels', () => {
    expect(requirementsOf('@version=1,@firmware!=2,@online in (true)')).toEqual([
      { subject: { field: 'version' }, op: 'eq', values: ['1'], position: 0 },
      { subject: { field: 'firmware' }, op: 'neq', values: ['2'], position: 11 },
      { subject: { field: 'online' }, op: 'in', values: ['true'], position: 24 },
    ])
  })

  it('keeps the empty value of `key=` and of `key!=`', () => {
    expect(requirementsOf('a=,b!=')).toEqual([
      { subject: { label: 'a' }, op: 'eq', values: [''], position: 0 },
      { subject: { label: 'b' }, op: 'neq', values: [''], position: 3 },
    ])
  })

  it('accepts 100 values in a set, without duplicates', () => {
    const [requirement] = requirementsOf(`${manyValues(100)},b in (x,x,x)`)
    expect(requirement!.values).toHaveLength(100)
    expect(requirementsOf('b in (x,x,x)')[0]!.values).toEqual(['x'])
  })
})
