import { useInfiniteQuery } from '@tanstack/react-query'
import { useTranslation } from 'react-i18next'
import { DataTable, type Column } from '../../../components/ui/data-table'
import { formatSeconds } from '../../../components/ui/format'
import { QueryState } from '../../../components/ui/query-state'
import { CountValue } from './figure-cells'
import { jobsQuery } from './get-production'
import type { Job } from './production-types'

/** Table "Jobs", newest first, "Load more" for older ones; a job still running has no end and no result yet. */
export function JobsTable({ id }: { id: string }) {
  const { t } = useTranslation()
  const query = useInfiniteQuery(jobsQuery(id))
  const jobs = query.data?.pages.flatMap((p) => p.jobs) ?? []
  const columns: Column<Job>[] = [
    { key: 'job', header: t('production.job'), cell: (j) => j.job_id },
    { key: 'started', header: t('production.started'), cell: (j) => formatSeconds(j.started_at, '') },
    { key: 'ended', header: t('production.ended'), cell: (j) => formatSeconds(j.ended_at, t('production.running')) },
    { key: 'result', header: t('production.result'), cell: (j) => (j.result === null ? t('production.running') : t(`production.results.${j.result}`, { defaultValue: j.result })) },
    { key: 'boards', header: t('production.boards'), cell: (j) => boards(j), numeric: true },
    { key: 'placed', header: t('production.placed'), cell: (j) => <CountValue value={j.placed} />, numeric: true },
    { key: 'missed', header: t('production.missed'), cell: (j) => <CountValue value={j.missed} />, numeric: true },
  ]
  if (!query.data) return <QueryState isPending={query.isPending} error={query.error} />
  return (
    <DataTable
      caption={t('production.jobs')}
      columns={columns}
      rows={jobs}
      rowKey={(j) => j.job_id}
      empty={t('production.noJobs')}
      footer={
        query.hasNextPage ? (
          <div className="paging">
            <button type="button" disabled={query.isFetchingNextPage} onClick={() => void query.fetchNextPage()}>
              {t('production.loadMore')}
            </button>
          </div>
        ) : null
      }
    />
  )

  /** "12 of 20" boards done of planned; "12" when none were planned; "—" before the job ends. */
  function boards(j: Job): string {
    if (j.boards_done === null) return j.boards_planned === null ? '—' : t('production.boardsPlanned', { planned: j.boards_planned })
    return j.boards_planned === null ? t('production.boardsDone', { done: j.boards_done }) : t('production.boardsOf', { done: j.boards_done, planned: j.boards_planned })
  }
}
