import { useTranslation } from 'react-i18next'
import { useSearchParams } from 'react-router'
import type { AuditFilter } from '../../../api/query-keys'

/** The URL's query names of the filters: the API's own. */
export const AUDIT_FILTER_PARAMS = ['action', 'actor', 'release_id'] as const

/** The filters kept in the URL (`/audit?action=firmware.upload&actor=root`), so a reload or a shared link shows the same records. */
export function useAuditFilter(): AuditFilter {
  const [params] = useSearchParams()
  const filter: AuditFilter = {}
  for (const name of AUDIT_FILTER_PARAMS) {
    const value = params.get(name)?.trim()
    if (value) filter[name] = value
  }
  return filter
}

/** Form "Filters": textboxes Action, Actor, Release; "Apply" puts them in the URL, "Clear filters" removes them. */
export function AuditFilters() {
  const { t } = useTranslation()
  const [params, setParams] = useSearchParams()
  const filter = useAuditFilter()
  const labels = { action: t('audit.action'), actor: t('audit.actor'), release_id: t('audit.release') }
  const apply = (form: HTMLFormElement) => {
    const fields = new FormData(form)
    const next = new URLSearchParams()
    for (const name of AUDIT_FILTER_PARAMS) {
      const value = String(fields.get(name) ?? '').trim()
      if (value) next.set(name, value)
    }
    setParams(next)
  }
  return (
    <form
      role="search"
      aria-label={t('audit.filters')}
      className="filters"
      // A filter changed from outside (Back, a link) refills the boxes.
      key={params.toString()}
      onSubmit={(e) => {
        e.preventDefault()
        apply(e.currentTarget)
      }}
    >
      {AUDIT_FILTER_PARAMS.map((name) => (
        <label key={name}>
          {labels[name]}
          <input name={name} type="text" defaultValue={filter[name] ?? ''} placeholder={t('audit.anyValue')} spellCheck={false} maxLength={128} />
        </label>
      ))}
      <button type="submit">{t('audit.apply')}</button>
      <button type="button" className="secondary" disabled={Object.keys(filter).length === 0} onClick={() => setParams(new URLSearchParams())}>
        {t('audit.clear')}
      </button>
    </form>
  )
}
