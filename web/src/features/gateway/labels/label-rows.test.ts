import { describe, expect, it } from 'vitest'
import { addRow, changeRow, labelsFromRows, removeRow, rowsFromLabels, type LabelRow } from './label-rows'

const rows = (...pairs: [string, string][]): LabelRow[] => pairs.map(([key, value], id) => ({ id, key, value }))

describe('"Edit labels" rows', () => {
  it('starts from the machine’s labels sorted by key, or one empty row', () => {
    expect(rowsFromLabels({ site: 'sz', line: 'l1' }).map(({ key, value }) => [key, value])).toEqual([['line', 'l1'], ['site', 'sz']])
    expect(rowsFromLabels({}).map(({ key, value }) => [key, value])).toEqual([['', '']])
  })

  it('adds, changes and removes rows by their stable id', () => {
    let state = rowsFromLabels({ site: 'sz' })
    state = addRow(state)
    const added = state[1]!.id
    expect(state[0]!.id).not.toBe(added)
    state = changeRow(state, added, 'key', 'line')
    state = changeRow(state, added, 'value', 'l2')
    expect(labelsFromRows(state)).toEqual({ ok: true, labels: { site: 'sz', line: 'l2' } })
    state = removeRow(state, state[0]!.id)
    expect(labelsFromRows(state)).toEqual({ ok: true, labels: { line: 'l2' } })
  })

  it('drops spaces around keys and values, ignores blank rows, and keeps empty values', () => {
    expect(labelsFromRows(rows([' site ', ' sz '], ['', ''], ['retired', '']))).toEqual({ ok: true, labels: { site: 'sz', retired: '' } })
    expect(labelsFromRows(rows(['', '  ']))).toEqual({ ok: true, labels: {} })
  })

  it('names the key at fault, with the row and field to focus', () => {
    expect(labelsFromRows(rows(['site', 'sz'], ['Site', 'x']))).toEqual({
      ok: false, problem: { key: 'labels.keyInvalid', row: 1, field: 'key', values: { key: 'Site' } },
    })
    expect(labelsFromRows(rows(['-site', 'x'])).ok).toBe(false)
    expect(labelsFromRows(rows(['fleetgate.io/customer', 'acme'])).ok).toBe(true)
    expect(labelsFromRows(rows(['site', 'sz wh']))).toEqual({
      ok: false, problem: { key: 'labels.valueInvalid', row: 0, field: 'value', values: { key: 'site' } },
    })
    expect(labelsFromRows(rows(['site', 'x'.repeat(64)])).ok).toBe(false)
    expect(labelsFromRows(rows(['', 'sz']))).toEqual({ ok: false, problem: { key: 'labels.keyMissing', row: 0, field: 'key', values: { value: 'sz' } } })
    expect(labelsFromRows(rows(['site', 'sz'], ['site ', 'gz']))).toEqual({
      ok: false, problem: { key: 'labels.keyTwice', row: 1, field: 'key', values: { key: 'site' } },
    })
  })

  it('refuses more than 32 labels, counting every row given', () => {
    const many = rows(...Array.from({ length: 33 }, (_, i): [string, string] => [`k${i}`, 'v']))
    expect(labelsFromRows(many.slice(0, 32)).ok).toBe(true)
    expect(labelsFromRows(many)).toEqual({ ok: false, problem: { key: 'labels.tooMany', row: 32, field: 'key', values: { count: 33, max: 32 } } })
  })
})
