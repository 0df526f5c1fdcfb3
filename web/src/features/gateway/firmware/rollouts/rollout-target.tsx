import { useId } from 'react'
import { useTranslation } from 'react-i18next'
import { selectorProblemOf } from '../../labels/selector-problem'
import { SelectorProblemText } from '../../labels/selector-problem-text'
import type { useSelectorCount } from '../../labels/use-selector-count'

export type RolloutTargetKind = 'all' | 'selector'

export interface RolloutTargetProps {
  target: RolloutTargetKind
  onTarget: (target: RolloutTargetKind) => void
  selector: string
  onSelector: (selector: string) => void
  count: ReturnType<typeof useSelectorCount>
  /** What "Start" found wrong with the selector (empty, matching nothing), translated. */
  problem: string | null
  inputRef: React.RefObject<HTMLInputElement | null>
}

/**
 * "Target machines" of "Start rollout": every known machine (the default), or the machines
 * matching textbox "Selector" (§15), whose count is shown as it is typed; a malformed selector
 * shows the server's message, marked where it went wrong.
 */
export function RolloutTarget({ target, onTarget, selector, onSelector, count, problem, inputRef }: RolloutTargetProps) {
  const { t } = useTranslation()
  const id = useId()
  const ids = { help: `${id}-help`, count: `${id}-count`, problem: `${id}-problem` }
  const invalid = count.settled ? selectorProblemOf(count.query.error) : null
  const shownProblem = !!invalid || !!problem
  return (
    <fieldset className="rollout-target">
      <legend>{t('rollouts.targetMachines')}</legend>
      {(['all', 'selector'] as const).map((kind) => (
        <label key={kind} className="choice">
          <input type="radio" name={`${id}-target`} value={kind} checked={target === kind} onChange={() => onTarget(kind)} />
          {t(kind === 'all' ? 'rollouts.targetAll' : 'rollouts.targetSelector')}
        </label>
      ))}
      {target === 'selector' ? (
        <div className="field">
          <label htmlFor={id}>{t('labels.selector')}</label>
          <input
            id={id}
            ref={inputRef}
            value={selector}
            onChange={(e) => onSelector(e.target.value)}
            autoComplete="off"
            spellCheck={false}
            aria-invalid={shownProblem ? true : undefined}
            aria-describedby={[ids.help, ids.count, shownProblem && ids.problem].filter(Boolean).join(' ')}
          />
          <span id={ids.help} className="field-help">
            {t('rollouts.selectorHelp')}
          </span>
          <p id={ids.count} role="status" className="selector-count">
            {shownProblem ? null : countText()}
          </p>
          {invalid ? (
            <SelectorProblemText id={ids.problem} selector={count.counted} problem={invalid} />
          ) : problem ? (
            <p id={ids.problem} role="alert" className="field-problem">
              {problem}
            </p>
          ) : null}
        </div>
      ) : null}
    </fieldset>
  )

  function countText(): string | null {
    if (selector.trim() === '') return null
    const { data, error } = count.query
    if (!count.settled || count.query.isPending) return t('labels.counting')
    if (error) return error.message
    return data === 0 ? t('labels.matchesNone') : t('labels.matches', { count: data })
  }
}
