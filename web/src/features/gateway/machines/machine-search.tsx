import { useId } from 'react'
import { useTranslation } from 'react-i18next'
import { useSearchParams } from 'react-router'
import { useUrlFilterText } from './use-url-filter-text'

/** The characters of a machine id (contract §2): a search for anything else cannot match. */
const ID_CHARS = /^[A-Za-z0-9._:-]{0,64}$/
/** Typing settles this long before the list asks the server. */
export const SEARCH_DELAY_MS = 300

/** The search prefix from the URL (`?q=`), "" for none. */
export function useMachineSearch(): string {
  const [params] = useSearchParams()
  const q = params.get('q') ?? ''
  return ID_CHARS.test(q) ? q : ''
}

/**
 * "Find by machine id": a prefix search kept in the URL (`?q=pnp-1`), beside the selector. A new
 * search starts at the first page. Typing is applied once it pauses; Enter applies it at once.
 */
export function MachineSearch() {
  const { t } = useTranslation()
  const id = useId()
  const { text, type, apply } = useUrlFilterText('q', { accept: (value) => ID_CHARS.test(value), delayMs: SEARCH_DELAY_MS })
  const valid = ID_CHARS.test(text)
  return (
    <form
      role="search"
      aria-label={t('machines.search')}
      className="machine-search"
      onSubmit={(e) => {
        e.preventDefault()
        apply(text)
      }}
    >
      <label htmlFor={id}>{t('machines.search')}</label>
      <input
        id={id}
        type="search"
        value={text}
        spellCheck={false}
        autoComplete="off"
        aria-invalid={!valid}
        aria-describedby={valid ? undefined : `${id}-problem`}
        onChange={(e) => type(e.target.value)}
      />
      {valid ? null : (
        <span id={`${id}-problem`} role="alert" className="field-problem">
          {t('machines.searchInvalid')}
        </span>
      )}
    </form>
  )
}
