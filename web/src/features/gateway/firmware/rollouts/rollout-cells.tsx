import type { TFunction } from 'i18next'
import { useTranslation } from 'react-i18next'
import type { Rollout, RolloutDevice } from '../../../../api/types'

/** "2 of 3 (50%)": the open stage, counted from 1, and the share of machines it reaches. */
export const stageText = (t: TFunction, rollout: Pick<Rollout, 'stage' | 'stages'>) =>
  t('rollouts.stageOf', { stage: rollout.stage + 1, count: rollout.stages.length, percent: rollout.stages[rollout.stage] ?? '?' })

/** A machine's stage: "1 (10%)". */
export const machineStageText = (t: TFunction, stage: number, stages: readonly number[]) =>
  t('rollouts.machineStage', { stage: stage + 1, percent: stages[stage] ?? '?' })

export function RolloutStateText({ state }: { state: Rollout['state'] }) {
  const { t } = useTranslation()
  return <span className={`rollout-state ${state}`}>{t(`rollouts.stateNames.${state}`)}</span>
}

/** "3 of 10 installed · 1 failed" over a bar; the bar is decoration, the text says it all. */
export function RolloutProgressCell({ rollout }: { rollout: Pick<Rollout, 'counts' | 'targeted'> }) {
  const { t } = useTranslation()
  const { installed, failed } = rollout.counts
  const percent = rollout.targeted > 0 ? (100 * installed) / rollout.targeted : 0
  return (
    <span className="rollout-progress">
      <span className="progress" aria-hidden="true">
        <span className="progress-bar" style={{ width: `${percent}%`, display: 'block' }} />
      </span>
      <span>
        {t('rollouts.installedOf', { installed, targeted: rollout.targeted })}
        {failed > 0 ? (
          <>
            {' · '}
            <span className="failed">{t('rollouts.failedCount', { count: failed })}</span>
          </>
        ) : null}
      </span>
    </span>
  )
}

/** A machine's state, with the error it reported when it failed. */
export function MachineStateText({ device }: { device: Pick<RolloutDevice, 'state' | 'error'> }) {
  const { t } = useTranslation()
  const name = t(`rollouts.machineStates.${device.state}`)
  return (
    <span className={`rollout-state ${device.state}`}>{device.state === 'failed' && device.error ? t('rollouts.failedWith', { error: device.error }) : name}</span>
  )
}
