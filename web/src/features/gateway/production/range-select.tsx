import { useId } from 'react'
import { useTranslation } from 'react-i18next'
import { RANGES, type RangeId } from './ranges'

/** "Range": Last 24 hours, Last 7 days, Last 30 days. */
export function RangeSelect({ value, onChange }: { value: RangeId; onChange: (value: RangeId) => void }) {
  const { t } = useTranslation()
  const id = useId()
  return (
    <div>
      <label htmlFor={id}>{t('production.range')}</label>
      <select id={id} value={value} onChange={(e) => onChange(e.target.value as RangeId)}>
        {RANGES.map((r) => (
          <option key={r.id} value={r.id}>
            {t(r.label)}
          </option>
        ))}
      </select>
    </div>
  )
}
