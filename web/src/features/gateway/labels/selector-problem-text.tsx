import { useTranslation } from 'react-i18next'
import { splitAtProblem, type SelectorProblem } from './selector-problem'
import './labels.css'

/**
 * The server's invalid_selector message in an alert tied to the field (`id` for its
 * aria-describedby), with the selector shown marked where it went wrong.
 */
export function SelectorProblemText({ id, selector, problem }: { id: string; selector: string; problem: SelectorProblem }) {
  const { t } = useTranslation()
  const marked = problem.position === null ? null : splitAtProblem(selector, problem.position)
  return (
    <div id={id} role="alert" className="field-problem selector-problem">
      <span>{t('labels.selectorInvalid', { message: problem.message })}</span>
      {marked ? (
        <code aria-hidden="true">
          {marked[0]}
          <mark>{marked[1]}</mark>
          {marked[2]}
        </code>
      ) : null}
    </div>
  )
}
