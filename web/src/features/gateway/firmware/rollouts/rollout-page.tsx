import { useInfiniteQuery } from '@tanstack/react-query'
import { useTranslation } from 'react-i18next'
import { Link, useParams } from 'react-router'
import { ROLLOUT_DEVICE_STATES, type Rollout, type RolloutDevice } from '../../../../api/types'
import { Alert } from '../../../../components/ui/alert'
import { ConfirmButton } from '../../../../components/ui/confirm-button'
import { DataTable, type Column } from '../../../../components/ui/data-table'
import { formatNumber, formatPercent, formatSeconds } from '../../../../components/ui/format'
import { QueryState } from '../../../../components/ui/query-state'
import { rolloutActionApplies, useChangeRollout } from './change-rollout'
import { rolloutQuery } from './get-rollout'
import { MachineStateText, RolloutStateText, machineStageText } from './rollout-cells'

import './rollouts.css'

/**
 * /firmware/rollouts/{id}: the rollout's state and stage, the selector it was created from (§15), progressbar "Rollout progress"
 * (installed of targeted), the count of machines in each state, "Pause", "Resume" and "Abort"
 * (asked first), and table "Rollout machines" a page at a time; all live from §11's events.
 */
export function RolloutPage() {
  const { t } = useTranslation()
  const id = useParams().id!
  const query = useInfiniteQuery(rolloutQuery(id))
  const rollout = query.data?.pages[0]?.rollout
  return (
    <>
      <p>
        <Link to="/firmware">{t('rollouts.backToFirmware')}</Link>
      </p>
      <h1 className="rollout-id">{id}</h1>
      {rollout ? (
        <>
          <RolloutSummary rollout={rollout} />
          <RolloutMachines rollout={rollout} devices={query.data!.pages.flatMap((p) => p.devices)} more={query.hasNextPage} loading={query.isFetchingNextPage} loadMore={() => void query.fetchNextPage()} />
        </>
      ) : (
        <QueryState isPending={query.isPending} error={query.error} />
      )}
    </>
  )
}

function RolloutSummary({ rollout }: { rollout: Rollout }) {
  const { t } = useTranslation()
  const pauseOrResume = useChangeRollout(rollout.rollout_id)
  const abort = useChangeRollout(rollout.rollout_id)
  const { installed } = rollout.counts
  const percent = rollout.targeted > 0 ? (100 * installed) / rollout.targeted : 0
  return (
    <div className="region rollout-summary">
      <p>
        {t('rollouts.summary', {
          version: rollout.display_version,
          id: rollout.release_id,
          time: formatSeconds(rollout.created_at, ''),
          name: rollout.created_by,
        })}
      </p>
      {rollout.selector !== null ? (
        <p>
          {t('rollouts.createdFromSelector')}
          <code className="rollout-selector">{rollout.selector}</code>
        </p>
      ) : null}
      <p>
        {t('rollouts.stateLabel')}
        <RolloutStateText state={rollout.state} />
        {' · '}
        {t('rollouts.stageLine', { stage: rollout.stage + 1, count: rollout.stages.length, percent: rollout.stages[rollout.stage] ?? '?' })}
      </p>
      {rollout.state === 'paused' && rollout.pause_reason ? (
        <p className="rollout-pause-reason">
          {t('rollouts.pauseReasonLabel')}
          {t(`rollouts.pauseReasons.${rollout.pause_reason}`)}
        </p>
      ) : null}
      {rollout.gate === 'waiting' && (rollout.state === 'running' || rollout.state === 'paused') ? <p className="rollout-gate">{t('rollouts.gateWaiting')}</p> : null}
      {rollout.gate === 'passed' ? <p className="rollout-gate passed">{t('rollouts.gatePassed')}</p> : null}
      <p className="muted">{t('rollouts.settings', { ratio: rollout.max_failure_ratio, seconds: rollout.soak_seconds })}</p>
      {rollout.kpi_gate ? (
        <p className="muted">
          {t('rollouts.gateSettings', {
            increase: formatPercent(rollout.kpi_gate.max_miss_rate_increase, 3),
            placements: rollout.kpi_gate.min_placements,
            wait: rollout.kpi_gate.wait_seconds,
          })}
        </p>
      ) : null}
      <div
        role="progressbar"
        aria-label={t('rollouts.rolloutProgress')}
        aria-valuemin={0}
        aria-valuemax={rollout.targeted}
        aria-valuenow={installed}
        aria-valuetext={t('rollouts.installedOf', { installed, targeted: rollout.targeted })}
        className="progress"
      >
        <div className="progress-bar" style={{ width: `${percent}%` }} />
      </div>
      <dl className="rollout-counts" aria-label={t('rollouts.counts')}>
        <div>
          <dt>{t('rollouts.targeted')}</dt>
          <dd>{formatNumber(rollout.targeted)}</dd>
        </div>
        {ROLLOUT_DEVICE_STATES.map((state) => (
          <div key={state}>
            <dt>{t(`rollouts.machineStates.${state}`)}</dt>
            <dd className={state === 'failed' && rollout.counts.failed > 0 ? 'rollout-state failed' : undefined}>{formatNumber(rollout.counts[state] ?? 0)}</dd>
          </div>
        ))}
      </dl>
      <div className="rollout-actions">
        <button type="button" disabled={!rolloutActionApplies('pause', rollout.state) || pauseOrResume.isPending} onClick={() => pauseOrResume.mutate('pause')}>
          {t('rollouts.pause')}
        </button>
        <button type="button" disabled={!rolloutActionApplies('resume', rollout.state) || pauseOrResume.isPending} onClick={() => pauseOrResume.mutate('resume')}>
          {t('rollouts.resume')}
        </button>
        <ConfirmButton
          label={t('rollouts.abort')}
          question={t('rollouts.abortQuestion', { id: rollout.rollout_id })}
          disabled={!rolloutActionApplies('abort', rollout.state)}
          onConfirm={async () => {
            await abort.mutateAsync('abort')
            return t('rollouts.aborted')
          }}
        />
      </div>
      {pauseOrResume.error ? <Alert>{pauseOrResume.error.message}</Alert> : null}
    </div>
  )
}

interface RolloutMachinesProps {
  rollout: Rollout
  devices: RolloutDevice[]
  more: boolean
  loading: boolean
  loadMore: () => void
}

function RolloutMachines({ rollout, devices, more, loading, loadMore }: RolloutMachinesProps) {
  const { t } = useTranslation()
  const columns: Column<RolloutDevice>[] = [
    { key: 'machine', header: t('rollouts.machine'), cell: (d) => <Link to={`/machines/${encodeURIComponent(d.device_id)}`}>{d.device_id}</Link> },
    { key: 'stage', header: t('rollouts.stage'), cell: (d) => machineStageText(t, d.stage, rollout.stages) },
    { key: 'state', header: t('rollouts.state'), cell: (d) => <MachineStateText device={d} /> },
    { key: 'progress', header: t('rollouts.progress'), cell: (d) => (d.progress === null ? t('rollouts.noProgress') : t('rollouts.percent', { value: Math.round(d.progress) })), numeric: true },
    { key: 'updated', header: t('rollouts.updatedAt'), cell: (d) => formatSeconds(d.updated_at, '') },
  ]
  return (
    <div style={{ marginTop: '1rem' }}>
      <DataTable
        caption={t('rollouts.rolloutMachines')}
        columns={columns}
        rows={devices}
        rowKey={(d) => d.device_id}
        empty={t('rollouts.machinesEmpty')}
        footer={
          more ? (
            <div className="paging">
              <button type="button" disabled={loading} onClick={loadMore}>
                {t('rollouts.loadMore')}
              </button>
            </div>
          ) : null
        }
      />
    </div>
  )
}
