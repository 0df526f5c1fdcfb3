import { infiniteQueryOptions, useInfiniteQuery } from '@tanstack/react-query'
import { useTranslation } from 'react-i18next'
import { api, ok } from '../../../api/api'
import { auditKeys, type AuditFilter } from '../../../api/query-keys'
import type { Answer } from '../../../api/types'
import { DataTable, type Column } from '../../../components/ui/data-table'
import { formatSeconds } from '../../../components/ui/format'
import { QueryState } from '../../../components/ui/query-state'
import { AuditFilters, useAuditFilter } from './audit-filters'

export type AuditRecord = Answer<'/api/v1/admin/audit', 'get'>['records'][number]

export const AUDIT_PAGE_SIZE = 50

/** Newest first; every page, "Load more" included, asks with the same filter. */
export const auditQuery = (filter: AuditFilter = {}) =>
  infiniteQueryOptions({
    queryKey: auditKeys.list(filter),
    initialPageParam: null as number | null,
    queryFn: ({ pageParam, signal }) =>
      ok(api.GET('/api/v1/admin/audit', { params: { query: { ...filter, limit: AUDIT_PAGE_SIZE, ...(pageParam ? { before: pageParam } : {}) } }, signal })),
    getNextPageParam: (last) => last.next_before ?? null,
  })

/** /audit: newest first, filtered by action, actor and release (kept in the URL), older pages by the API's cursor. */
export function AuditPage() {
  const { t } = useTranslation()
  const audit = useInfiniteQuery(auditQuery(useAuditFilter()))
  const rows = audit.data?.pages.flatMap((p) => p.records) ?? []
  const columns: Column<AuditRecord>[] = [
    { key: 'time', header: t('audit.time'), cell: (r) => formatSeconds(r.at, '') },
    { key: 'actor', header: t('audit.actor'), cell: (r) => r.actor },
    { key: 'action', header: t('audit.action'), cell: (r) => r.action },
    { key: 'target', header: t('audit.target'), cell: (r) => r.release_id ?? r.device_id ?? '—' },
    { key: 'outcome', header: t('audit.outcome'), cell: (r) => r.outcome },
  ]
  return (
    <>
      <h1>{t('audit.title')}</h1>
      <AuditFilters />
      {audit.data ? (
        <DataTable
          caption={t('audit.title')}
          columns={columns}
          rows={rows}
          rowKey={(r) => String(r.id)}
          empty={t('app.none')}
          footer={
            <div className="paging">
              <button type="button" disabled={!audit.hasNextPage || audit.isFetchingNextPage} onClick={() => void audit.fetchNextPage()}>
                {t('audit.loadMore')}
              </button>
            </div>
          }
        />
      ) : (
        <QueryState isPending={audit.isPending} error={audit.error} />
      )}
    </>
  )
}
