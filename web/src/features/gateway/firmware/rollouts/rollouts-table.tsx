import { useInfiniteQuery } from '@tanstack/react-query'
import { useTranslation } from 'react-i18next'
import { Link } from 'react-router'
import type { Rollout } from '../../../../api/types'
import { DataTable, type Column } from '../../../../components/ui/data-table'
import { formatSeconds } from '../../../../components/ui/format'
import { QueryState } from '../../../../components/ui/query-state'
import { rolloutsQuery } from './get-rollouts'
import { RolloutProgressCell, RolloutStateText, stageText } from './rollout-cells'
import './rollouts.css'

export const rolloutHref = (id: string) => `/firmware/rollouts/${encodeURIComponent(id)}`

/** Table "Rollouts" (Release, State, Stage, Progress), newest first, live from `rollout` events. */
export function RolloutsTable() {
  const { t } = useTranslation()
  const rollouts = useInfiniteQuery(rolloutsQuery())
  if (!rollouts.data) return <QueryState isPending={rollouts.isPending} error={rollouts.error} />
  const rows = rollouts.data.pages.flatMap((p) => p.rollouts)
  const columns: Column<Rollout>[] = [
    { key: 'release', header: t('rollouts.releaseColumn'), cell: (r) => <Link to={rolloutHref(r.rollout_id)}>{r.display_version}</Link> },
    { key: 'state', header: t('rollouts.state'), cell: (r) => <RolloutStateText state={r.state} /> },
    { key: 'stage', header: t('rollouts.stage'), cell: (r) => stageText(t, r) },
    { key: 'progress', header: t('rollouts.progress'), cell: (r) => <RolloutProgressCell rollout={r} /> },
    { key: 'started', header: t('rollouts.startedAt'), cell: (r) => t('rollouts.startedBy', { time: formatSeconds(r.created_at, ''), name: r.created_by }) },
  ]
  return (
    <DataTable
      caption={t('rollouts.rollouts')}
      columns={columns}
      rows={rows}
      rowKey={(r) => r.rollout_id}
      empty={t('rollouts.empty')}
      footer={
        rollouts.hasNextPage ? (
          <div className="paging">
            <button type="button" disabled={rollouts.isFetchingNextPage} onClick={() => void rollouts.fetchNextPage()}>
              {t('rollouts.loadMore')}
            </button>
          </div>
        ) : null
      }
    />
  )
}
