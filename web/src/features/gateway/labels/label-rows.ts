import { labelEntryProblem, MAX_LABELS } from '../../../../../src/gateway/labels/label-rules'

/**
 * The "Edit labels" form's state: one row per label, in the order shown. Rows are judged by the
 * server's own rules (label-rules.ts, shared), so the form says what the server would refuse, and
 * which key, before anything is sent. A problem is a translation key with its values.
 */
export interface LabelRow {
  /** Stable across edits, for React keys and focus. */
  id: number
  key: string
  value: string
}

export type LabelRowField = 'key' | 'value'

export type LabelsFormProblem =
  | { key: 'labels.keyMissing'; row: number; field: 'key'; values: { value: string } }
  | { key: 'labels.keyInvalid'; row: number; field: 'key'; values: { key: string } }
  | { key: 'labels.valueInvalid'; row: number; field: 'value'; values: { key: string } }
  | { key: 'labels.keyTwice'; row: number; field: 'key'; values: { key: string } }
  | { key: 'labels.tooMany'; row: number; field: 'key'; values: { count: number; max: number } }

export type LabelsFromRows = { ok: true; labels: Record<string, string> } | { ok: false; problem: LabelsFormProblem }

let nextId = 1
export const newRow = (key = '', value = ''): LabelRow => ({ id: nextId++, key, value })

/** A machine's labels as rows, sorted by key; a machine without labels starts with one empty row. */
export function rowsFromLabels(labels: Readonly<Record<string, string>>): LabelRow[] {
  const rows = Object.keys(labels)
    .sort()
    .map((key) => newRow(key, labels[key]))
  return rows.length > 0 ? rows : [newRow()]
}

export const addRow = (rows: readonly LabelRow[]): LabelRow[] => [...rows, newRow()]

export const removeRow = (rows: readonly LabelRow[], id: number): LabelRow[] => rows.filter((row) => row.id !== id)

export const changeRow = (rows: readonly LabelRow[], id: number, field: LabelRowField, text: string): LabelRow[] =>
  rows.map((row) => (row.id === id ? { ...row, [field]: text } : row))

const isBlank = (row: LabelRow) => row.key.trim() === '' && row.value.trim() === ''

/**
 * The labels the rows say (spaces around a key or value dropped, blank rows ignored), or the first
 * problem: a value without a key, a key or value the rules refuse, a key given twice, too many.
 */
export function labelsFromRows(rows: readonly LabelRow[]): LabelsFromRows {
  const labels: Record<string, string> = {}
  let count = 0
  for (const [row, entry] of rows.entries()) {
    if (isBlank(entry)) continue
    const key = entry.key.trim()
    const value = entry.value.trim()
    if (key === '') return { ok: false, problem: { key: 'labels.keyMissing', row, field: 'key', values: { value } } }
    const problem = labelEntryProblem(key, value)
    if (problem?.kind === 'badKey') return { ok: false, problem: { key: 'labels.keyInvalid', row, field: 'key', values: { key } } }
    if (problem) return { ok: false, problem: { key: 'labels.valueInvalid', row, field: 'value', values: { key } } }
    if (Object.hasOwn(labels, key)) return { ok: false, problem: { key: 'labels.keyTwice', row, field: 'key', values: { key } } }
    count += 1
    if (count > MAX_LABELS) return { ok: false, problem: { key: 'labels.tooMany', row, field: 'key', values: { count: rows.filter((r) => !isBlank(r)).length, max: MAX_LABELS } } }
    labels[key] = value
  }
  return { ok: true, labels }
}
