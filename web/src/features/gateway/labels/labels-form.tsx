import { useId, useRef, useState } from 'react'
import { useTranslation } from 'react-i18next'
import type { Labels } from '../../../api/types'
import { Alert } from '../../../components/ui/alert'
import { addRow, changeRow, labelsFromRows, removeRow, rowsFromLabels, type LabelRowField } from './label-rows'
import './labels.css'

export interface LabelsFormProps {
  labels: Labels
  saving: boolean
  /** The server's refusal, shown in an alert. */
  error: Error | null
  onSave: (labels: Labels) => void
  onCancel: () => void
}

/**
 * The rows of "Edit labels": textboxes "Key n" and "Value n", "Remove label n", "Add label".
 * "Save" checks them by the server's rules first: the problem, naming the key, is shown in an
 * alert tied to the field at fault, which takes the focus; once shown it follows the typing.
 */
export function LabelsForm({ labels, saving, error, onSave, onCancel }: LabelsFormProps) {
  const { t } = useTranslation()
  const [rows, setRows] = useState(() => rowsFromLabels(labels))
  const [attempted, setAttempted] = useState(false)
  const [added, setAdded] = useState<number | null>(null)
  const inputs = useRef(new Map<string, HTMLInputElement>())
  const addButton = useRef<HTMLButtonElement>(null)
  const ids = { rules: useId(), problem: useId() }
  const result = labelsFromRows(rows)
  const problem = attempted && !result.ok ? result.problem : null
  const fieldRef = (rowId: number, field: LabelRowField) => (input: HTMLInputElement | null) => {
    if (input) inputs.current.set(`${rowId}:${field}`, input)
    else inputs.current.delete(`${rowId}:${field}`)
  }

  const submit = (e: React.FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    setAttempted(true)
    if (result.ok) return onSave(result.labels)
    inputs.current.get(`${rows[result.problem.row]!.id}:${result.problem.field}`)?.focus()
  }

  const field = (index: number, rowId: number, name: LabelRowField, value: string) => {
    const faulty = problem?.row === index && problem.field === name
    return (
      <input
        ref={fieldRef(rowId, name)}
        value={value}
        aria-label={t(name === 'key' ? 'labels.keyN' : 'labels.valueN', { n: index + 1 })}
        onChange={(e) => setRows((current) => changeRow(current, rowId, name, e.target.value))}
        autoFocus={name === 'key' && rowId === added}
        autoComplete="off"
        spellCheck={false}
        aria-invalid={faulty ? true : undefined}
        aria-describedby={faulty ? `${ids.problem} ${ids.rules}` : ids.rules}
      />
    )
  }

  return (
    <form onSubmit={submit} className="stack labels-form" noValidate>
      <p id={ids.rules} className="field-help">
        {t('labels.rules')}
      </p>
      <div className="label-rows">
        <div className="label-row label-rows-head" aria-hidden="true">
          <span>{t('labels.key')}</span>
          <span>{t('labels.value')}</span>
        </div>
        {rows.map((row, index) => (
          <div key={row.id} className="label-row">
            {field(index, row.id, 'key', row.key)}
            {field(index, row.id, 'value', row.value)}
            <button
              type="button"
              className="secondary"
              aria-label={t('labels.removeN', { n: index + 1 })}
              title={t('labels.removeN', { n: index + 1 })}
              onClick={() => {
                setRows((current) => removeRow(current, row.id))
                addButton.current?.focus()
              }}
            >
              ×
            </button>
          </div>
        ))}
      </div>
      <div>
        <button
          ref={addButton}
          type="button"
          className="secondary"
          onClick={() => {
            const next = addRow(rows)
            setAdded(next.at(-1)!.id)
            setRows(next)
          }}
        >
          {t('labels.add')}
        </button>
      </div>
      {problem ? (
        <p id={ids.problem} role="alert" className="field-problem">
          {t(problem.key, problem.values)}
        </p>
      ) : null}
      {error ? <Alert>{error.message}</Alert> : null}
      <div className="actions">
        <button type="submit" disabled={saving}>
          {t('labels.save')}
        </button>
        <button type="button" className="secondary" onClick={onCancel}>
          {t('app.cancel')}
        </button>
      </div>
    </form>
  )
}
