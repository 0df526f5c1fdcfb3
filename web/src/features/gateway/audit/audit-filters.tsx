import { useRef } from 'react'
import { useTranslation } from 'react-i18next'
import { useSearchParams } from 'react-router'
import type { AuditFilter } from '../../../api/query-keys'
import { useUrlDraft } from '../../../components/ui/use-url-draft'

/** The URL's query names of the filters: the API's own. */
export const AUDIT_FILTER_PARAMS = ['action', 'actor', 'release_id'] as const

type FilterName = (typeof AUDIT_FILTER_PARAMS)[number]
type FilterTexts = Record<FilterName, string>

function filterOf(params: URLSearchParams): AuditFilter {
  const filter: AuditFilter = {}
  for (const name of AUDIT_FILTER_PARAMS) {
    const value = params.get(name)?.trim()
    if (value) filter[name] = value
  }
  return filter
}

/** The filter as the URL's query, the names in one order, so two equal filters read the same. */
function queryOf(filter: AuditFilter | FilterTexts): URLSearchParams {
  const query = new URLSearchParams()
  for (const name of AUDIT_FILTER_PARAMS) {
    const value = filter[name]?.trim()
    if (value) query.set(name, value)
  }
  return query
}

const textsOf = (filter: AuditFilter): FilterTexts => ({ action: filter.action ?? '', actor: filter.actor ?? '', release_id: filter.release_id ?? '' })

/** The filters kept in the URL (`/audit?action=firmware.upload&actor=root`), so a reload or a shared link shows the same records. */
export function useAuditFilter(): AuditFilter {
  const [params] = useSearchParams()
  return filterOf(params)
}

/**
 * Form "Filters": textboxes Action, Actor, Release; "Apply" (or Enter) puts them in the URL,
 * "Clear filters" removes them and goes back to the first box. A filter changed from outside
 * (Back, a link) refills the boxes; one this form put there leaves what is being typed alone
 * (the URL changes a render later, in a transition).
 */
export function AuditFilters() {
  const { t } = useTranslation()
  const [params, setParams] = useSearchParams()
  const filter = filterOf(params)
  const inUrl = queryOf(filter).toString()
  const { draft: texts, setDraft: setTexts, applying } = useUrlDraft(inUrl, () => textsOf(filter))
  const firstBox = useRef<HTMLInputElement>(null)
  const labels = { action: t('audit.action'), actor: t('audit.actor'), release_id: t('audit.release') }
  const apply = (next: FilterTexts) => {
    const query = queryOf(next)
    applying(query.toString())
    setParams(query)
  }
  const clear = () => {
    const empty = textsOf({})
    setTexts(empty)
    apply(empty)
    // The button is disabled once nothing is filtered: focus goes where the next filter is typed.
    firstBox.current?.focus()
  }
  return (
    <form
      role="search"
      aria-label={t('audit.filters')}
      className="filters"
      onSubmit={(e) => {
        e.preventDefault()
        apply(texts)
      }}
    >
      {AUDIT_FILTER_PARAMS.map((name, i) => (
        <label key={name}>
          {labels[name]}
          <input
            ref={i === 0 ? firstBox : undefined}
            name={name}
            type="text"
            value={texts[name]}
            onChange={(e) => setTexts((current) => ({ ...current, [name]: e.target.value }))}
            placeholder={t('audit.anyValue')}
            spellCheck={false}
            maxLength={128}
          />
        </label>
      ))}
      <button type="submit">{t('audit.apply')}</button>
      <button type="button" className="secondary" disabled={inUrl === ''} onClick={clear}>
        {t('audit.clear')}
      </button>
    </form>
  )
}
