import { useId, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { useSearchParams } from 'react-router'
import type { SelectorProblem } from '../labels/selector-problem'
import { SelectorProblemText } from '../labels/selector-problem-text'
import { selectorOf, withMachineFilter } from './machine-filters'
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
  const [params, setParams] = useSearchParams()
  const selector = selectorOf(params)
  const [text, setText] = useState(selector)
  // A selector changed from outside (Back, a link) replaces the text.
  const [seen, setSeen] = useState(selector)
  if (selector !== seen) {
    setSeen(selector)
    setText(selector)
  }
  const apply = (value: string) => setParams((current) => withMachineFilter(current, 'selector', value.trim()))
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
          onChange={(e) => setText(e.target.value)}
          spellCheck={false}
          autoComplete="off"
          aria-invalid={problem ? true : undefined}
          aria-describedby={problem ? `${ids.problem} ${ids.help}` : ids.help}
        />
        <button type="submit">{t('labels.apply')}</button>
        {selector ? (
          <button type="button" className="secondary" onClick={() => apply('')}>
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
