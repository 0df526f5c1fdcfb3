import { useId } from 'react'
import { useTranslation } from 'react-i18next'
import type { SelectorProblem } from '../labels/selector-problem'
import { SelectorProblemText } from '../labels/selector-problem-text'
import { selectorOf } from './machine-filters'
import { useUrlFilterText } from './use-url-filter-text'
import '../labels/labels.css'

/**
 * Textbox "Selector" over the machines list (§15), kept in the URL (`?selector=site%3Dsz`):
 * "Apply" (or Enter) puts it there, "Clear selector" takes it away. A selector the server finds
 * malformed (`problem`) is shown in an alert tied to the field, marked where it went wrong.
 */
export function SelectorFilter({ problem }: { problem: SelectorProblem | null }) {
  const { t } = useTranslation()
  const id = useId()
  const ids = { help: `${id}-help`, problem: `${id}-problem` }
  const { value: selector, text, type, apply, clear } = useUrlFilterText('selector', { read: selectorOf, normalize: (value) => value.trim() })
  return (
    <form
      role="search"
      aria-label={t('labels.selectorFilter')}
      className="selector-filter"
      onSubmit={(e) => {
        e.preventDefault()
        apply(text)
      }}
    >
      <div className="selector-filter-row">
        <label htmlFor={id}>{t('labels.selector')}</label>
        <input
          id={id}
          type="text"
          value={text}
          onChange={(e) => type(e.target.value)}
          spellCheck={false}
          autoComplete="off"
          aria-invalid={problem ? true : undefined}
          aria-describedby={problem ? `${ids.problem} ${ids.help}` : ids.help}
        />
        <button type="submit">{t('labels.apply')}</button>
        {selector ? (
          <button type="button" className="secondary" onClick={clear}>
            {t('labels.clearSelector')}
          </button>
        ) : null}
      </div>
      <span id={ids.help} className="field-help">
        {t('labels.selectorHelp')}
      </span>
      {problem ? <SelectorProblemText id={ids.problem} selector={selector} problem={problem} /> : null}
    </form>
  )
}
