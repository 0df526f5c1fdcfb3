import { useQueryClient } from '@tanstack/react-query'
import { useId, useRef, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { useNavigate } from 'react-router'
import { Alert } from '../../../../components/ui/alert'
import { Dialog } from '../../../../components/ui/dialog'
import { selectorMatchesQuery } from '../../labels/selector-matches'
import { useSelectorCount } from '../../labels/use-selector-count'
import type { Release } from '../get-releases'
import { formatPercent } from '../../../../components/ui/format'
import {
  DEFAULT_MAX_FAILURE_RATIO,
  DEFAULT_MIN_PLACEMENTS,
  DEFAULT_STAGES,
  DEFAULT_WAIT_SECONDS,
  parseFailureRatio,
  parseKpiGate,
  parseStages,
  type KpiGateProblem,
  type RatioProblem,
  type StagesProblem,
} from './rollout-form'
import { RolloutTarget, type RolloutTargetKind } from './rollout-target'
import { useStartRollout } from './start-rollout'
import './rollouts.css'

/** The release a rollout starts with: the newest one not active yet, else the newest. */
const defaultRelease = (releases: readonly Release[]) => releases.find((r) => r.state !== 'active') ?? releases[0]

/**
 * "Start rollout" (contract §12, §14): a dialog with "Release", "Stages", "Max failure ratio" and
 * the target machines (every known one, or those matching a "Selector", §15); "Start" checks the fields and then asks, in the same dialog, what will happen, and only
 * "Confirm" sends it. The server's refusal (400, 404, 409) is shown in the dialog; a rollout
 * started opens its page.
 */
export function StartRolloutButton({ releases }: { releases: readonly Release[] }) {
  const { t } = useTranslation()
  const navigate = useNavigate()
  const start = useStartRollout()
  const client = useQueryClient()
  const [open, setOpen] = useState(false)
  const [step, setStep] = useState<'form' | 'confirm'>('form')
  const [chosen, setChosen] = useState('')
  const [stagesText, setStagesText] = useState(DEFAULT_STAGES)
  const [ratioText, setRatioText] = useState(DEFAULT_MAX_FAILURE_RATIO)
  const [attempted, setAttempted] = useState(false)
  const [increaseText, setIncreaseText] = useState('')
  const [placementsText, setPlacementsText] = useState(DEFAULT_MIN_PLACEMENTS)
  const [waitText, setWaitText] = useState(DEFAULT_WAIT_SECONDS)
  const [target, setTarget] = useState<RolloutTargetKind>('all')
  const [selectorText, setSelectorText] = useState('')
  const [targetProblem, setTargetProblem] = useState<'labels.selectorEmpty' | 'labels.matchesNone' | null>(null)
  const [checking, setChecking] = useState(false)
  /** Machines the selector matched when "Start" was pressed. */
  const [matched, setMatched] = useState(0)
  const stagesRef = useRef<HTMLInputElement>(null)
  const ratioRef = useRef<HTMLInputElement>(null)
  const selectorRef = useRef<HTMLInputElement>(null)
  const gateRefs = { increase: useRef<HTMLInputElement>(null), placements: useRef<HTMLInputElement>(null), wait: useRef<HTMLInputElement>(null) }
  const count = useSelectorCount(selectorText, open && target === 'selector')
  const selector = selectorText.trim()
  const ids = { release: useId() }

  const release = releases.find((r) => r.release_id === chosen) ?? defaultRelease(releases)
  const stages = parseStages(stagesText)
  const ratio = parseFailureRatio(ratioText)
  const stagesProblem = attempted && !stages.ok ? problemText(stages.problem) : null
  const ratioProblem = attempted && !ratio.ok ? problemText(ratio.problem) : null
  const gate = parseKpiGate(increaseText, placementsText, waitText)
  const gateProblem = (field: KpiGateProblem['field']) => (attempted && !gate.ok && gate.problem.field === field ? t(gate.problem.key) : null)

  function problemText({ key, ...values }: StagesProblem | RatioProblem): string {
    return t(key, values)
  }

  const openDialog = () => {
    start.reset()
    setStep('form')
    setChosen('')
    setStagesText(DEFAULT_STAGES)
    setRatioText(DEFAULT_MAX_FAILURE_RATIO)
    setIncreaseText('')
    setPlacementsText(DEFAULT_MIN_PLACEMENTS)
    setWaitText(DEFAULT_WAIT_SECONDS)
    setAttempted(false)
    setTarget('all')
    setSelectorText('')
    setTargetProblem(null)
    setOpen(true)
  }

  const review = async (e: React.FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    setAttempted(true)
    if (!stages.ok) return stagesRef.current?.focus()
    if (!ratio.ok) return ratioRef.current?.focus()
    if (!gate.ok) return gateRefs[gate.problem.field].current?.focus()
    if (!release) return
    if (target === 'selector' && !(await selectorMatches())) return selectorRef.current?.focus()
    start.reset()
    setStep('confirm')
  }

  /** Whether the selector matches machines now (their count kept for the question); else why not is shown at the field. */
  async function selectorMatches(): Promise<boolean> {
    if (selector === '') {
      setTargetProblem('labels.selectorEmpty')
      return false
    }
    count.flush()
    setChecking(true)
    try {
      const total = await client.fetchQuery(selectorMatchesQuery(selector))
      setMatched(total)
      setTargetProblem(total === 0 ? 'labels.matchesNone' : null)
      return total > 0
    } catch {
      return false // the count's query holds the error, shown at the field
    } finally {
      setChecking(false)
    }
  }

  const confirm = () => {
    if (!release || !stages.ok || !ratio.ok || !gate.ok) return
    start.mutate(
      {
        release_id: release.release_id,
        stages: stages.value,
        max_failure_ratio: ratio.value,
        ...(target === 'selector' ? { selector } : {}),
        ...(gate.value ? { kpi_gate: gate.value } : {}),
      },
      {
        onSuccess: ({ rollout }) => {
          setOpen(false)
          void navigate(`/firmware/rollouts/${encodeURIComponent(rollout.rollout_id)}`)
        },
        // Back to the fields, with the server's message: a 400 is fixed there, a 404 or 409 read there.
        onError: () => setStep('form'),
      },
    )
  }

  return (
    <>
      <button type="button" onClick={openDialog}>
        {t('rollouts.startRollout')}
      </button>
      <Dialog open={open} title={t('rollouts.startRollout')} onClose={() => setOpen(false)} className="rollout-dialog">
        {step === 'form' ? (
          <form onSubmit={(e) => void review(e)} className="stack" noValidate>
            {releases.length === 0 ? <p>{t('rollouts.noReleases')}</p> : null}
            <div className="field">
              <label htmlFor={ids.release}>{t('rollouts.release')}</label>
              <select id={ids.release} value={release?.release_id ?? ''} onChange={(e) => setChosen(e.target.value)} disabled={releases.length === 0}>
                {releases.map((r) => (
                  <option key={r.release_id} value={r.release_id}>
                    {t(r.state === 'active' ? 'rollouts.releaseOptionActive' : 'rollouts.releaseOption', { version: r.display_version, id: r.release_id })}
                  </option>
                ))}
              </select>
            </div>
            <CheckedField
              label={t('rollouts.stages')}
              help={t('rollouts.stagesHelp')}
              problem={stagesProblem}
              inputRef={stagesRef}
              value={stagesText}
              onChange={setStagesText}
              inputMode="numeric"
            />
            <CheckedField
              label={t('rollouts.maxFailureRatio')}
              help={t('rollouts.ratioHelp')}
              problem={ratioProblem}
              inputRef={ratioRef}
              value={ratioText}
              onChange={setRatioText}
              inputMode="decimal"
            />
            <fieldset className="kpi-gate">
              <legend>{t('rollouts.kpiGate')}</legend>
              <CheckedField
                label={t('rollouts.maxMissRateIncrease')}
                help={t('rollouts.kpiGateHelp')}
                problem={gateProblem('increase')}
                inputRef={gateRefs.increase}
                value={increaseText}
                onChange={setIncreaseText}
                inputMode="decimal"
              />
              <CheckedField
                label={t('rollouts.minPlacements')}
                problem={gateProblem('placements')}
                inputRef={gateRefs.placements}
                value={placementsText}
                onChange={setPlacementsText}
                inputMode="numeric"
              />
              <CheckedField
                label={t('rollouts.waitSeconds')}
                problem={gateProblem('wait')}
                inputRef={gateRefs.wait}
                value={waitText}
                onChange={setWaitText}
                inputMode="numeric"
              />
            </fieldset>
            <RolloutTarget
              target={target}
              onTarget={(kind) => {
                setTarget(kind)
                setTargetProblem(null)
              }}
              selector={selectorText}
              onSelector={(text) => {
                setSelectorText(text)
                setTargetProblem(null)
              }}
              count={count}
              problem={targetProblem ? t(targetProblem) : null}
              inputRef={selectorRef}
            />
            {start.error ? <Alert>{start.error.message}</Alert> : null}
            <div className="actions">
              <button type="submit" disabled={!release || checking}>
                {t('rollouts.start')}
              </button>
              <button type="button" className="secondary" onClick={() => setOpen(false)}>
                {t('app.cancel')}
              </button>
            </div>
          </form>
        ) : (
          <div className="stack">
            {release && stages.ok && ratio.ok ? (
              <>
                <p>
                  {t(target === 'selector' ? 'rollouts.confirmStartSelector' : 'rollouts.confirmStart', {
                    count: stages.value.length,
                    version: release.display_version,
                    id: release.release_id,
                    stages: stages.value.map((value) => t('rollouts.percent', { value })).join(t('rollouts.stageSeparator')),
                    selector,
                  })}
                </p>
                {target === 'selector' ? <p>{t('rollouts.matchedNow', { count: matched })}</p> : null}
                <p>{t('rollouts.confirmRules', { percent: Math.round(ratio.value * 1000) / 10, version: release.display_version })}</p>
                {gate.ok && gate.value ? <p>{t('rollouts.confirmGate', { increase: formatPercent(gate.value.max_miss_rate_increase, 3) })}</p> : null}
              </>
            ) : null}
            <div className="actions">
              <button type="button" onClick={confirm} disabled={start.isPending} autoFocus>
                {t('app.confirm')}
              </button>
              <button type="button" className="secondary" onClick={() => setStep('form')} disabled={start.isPending}>
                {t('rollouts.back')}
              </button>
            </div>
          </div>
        )}
      </Dialog>
    </>
  )
}

const describedBy = (...parts: (string | false)[]) => parts.filter(Boolean).join(' ')

/** A text field checked before the dialog goes on: its help, and its problem in an alert tied to it. */
function CheckedField(props: {
  label: string
  help?: string
  problem: string | null
  inputRef: React.RefObject<HTMLInputElement | null>
  value: string
  onChange: (value: string) => void
  inputMode: 'numeric' | 'decimal'
}) {
  const id = useId()
  const helpId = useId()
  const problemId = useId()
  return (
    <>
      <div className="field">
        <label htmlFor={id}>{props.label}</label>
        <input
          id={id}
          ref={props.inputRef}
          value={props.value}
          onChange={(e) => props.onChange(e.target.value)}
          inputMode={props.inputMode}
          autoComplete="off"
          aria-invalid={props.problem ? true : undefined}
          aria-describedby={describedBy(!!props.help && helpId, !!props.problem && problemId) || undefined}
        />
        {props.help ? (
          <span id={helpId} className="field-help">
            {props.help}
          </span>
        ) : null}
      </div>
      {props.problem ? (
        <p id={problemId} role="alert" className="field-problem">
          {props.problem}
        </p>
      ) : null}
    </>
  )
}
