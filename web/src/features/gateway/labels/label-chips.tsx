import { useTranslation } from 'react-i18next'
import type { Labels } from '../../../api/types'
import './labels.css'

/** `site=sz`; a label whose value is empty reads as its key alone (as `site` in a selector). */
export const labelText = (key: string, value: string) => (value === '' ? key : `${key}=${value}`)

/**
 * A machine's labels as chips, sorted by key. With `max`, the rest is counted ("+2 more") and
 * listed in the chip's tooltip; `name` names the list (where no column header does).
 */
export function LabelChips({ labels, max, name }: { labels: Labels; max?: number; name?: string }) {
  const { t } = useTranslation()
  const keys = Object.keys(labels).sort()
  if (keys.length === 0) return null
  const shown = max === undefined ? keys : keys.slice(0, max)
  const rest = keys.slice(shown.length)
  return (
    <ul className="label-chips" aria-label={name}>
      {shown.map((key) => (
        <li key={key} className="label-chip">
          {labelText(key, labels[key]!)}
        </li>
      ))}
      {rest.length > 0 ? (
        <li className="label-chip more" title={rest.map((key) => labelText(key, labels[key]!)).join(', ')}>
          {t('labels.more', { count: rest.length })}
        </li>
      ) : null}
    </ul>
  )
}
