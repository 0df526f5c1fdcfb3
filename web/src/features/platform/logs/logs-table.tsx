import type { InfiniteData, UseInfiniteQueryResult } from '@tanstack/react-query'
import { useTranslation } from 'react-i18next'
import { DataTable, type Column } from '../../../components/ui/data-table'
import { formatMillis } from '../../../components/ui/format'
import { QueryState } from '../../../components/ui/query-state'
import type { LogEntry, LogList } from '../platform-types'

export interface LogsTableProps {
  caption: string
  query: UseInfiniteQueryResult<InfiniteData<LogList>>
  /** The device column (operation log) or the level column (a device's log). */
  variant: 'device' | 'operation'
  empty: string
}

/** A log table, newest first, with "Load more" while the API has an older page. */
export function LogsTable({ caption, query, variant, empty }: LogsTableProps) {
  const { t } = useTranslation()
  if (!query.data) return <QueryState isPending={query.isPending} error={query.error} />
  const rows = query.data.pages.flatMap((p) => p.logs)
  const columns: Column<LogEntry>[] = [
    { key: 'time', header: t('platform.time'), cell: (l) => formatMillis(l.ts, t('app.never')) },
    variant === 'device'
      ? { key: 'level', header: t('platform.level'), cell: (l) => <span className={`level ${l.level}`}>{l.level}</span> }
      : { key: 'device', header: t('platform.device'), cell: (l) => l.device_id ?? '' },
    { key: 'tag', header: variant === 'device' ? t('platform.tag') : t('platform.action'), cell: (l) => l.tag ?? '' },
    { key: 'message', header: t('platform.message'), cell: (l) => <span className="message">{l.message}</span> },
  ]
  const footer = query.hasNextPage ? (
    <div className="paging">
      <button type="button" onClick={() => void query.fetchNextPage()} disabled={query.isFetchingNextPage}>
        {t('platform.loadMore')}
      </button>
    </div>
  ) : null
  return <DataTable caption={caption} columns={columns} rows={rows} rowKey={(l) => String(l.id)} empty={empty} footer={footer} />
}
