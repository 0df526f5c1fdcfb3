import { useInfiniteQuery, useMutation, useQueryClient } from '@tanstack/react-query'
import { useTranslation } from 'react-i18next'
import { firmwareKeys } from '../../../api/query-keys'
import { ConfirmButton } from '../../../components/ui/confirm-button'
import { DataTable, type Column } from '../../../components/ui/data-table'
import { formatBytes, formatNumber, formatSeconds } from '../../../components/ui/format'
import { QueryState } from '../../../components/ui/query-state'
import { activateRelease, releasesQuery, type Release } from './get-releases'
import { ShaCell } from './release-cells'
import { RolloutsTable } from './rollouts/rollouts-table'
import { StartRolloutButton } from './rollouts/start-rollout-dialog'
import { UploadForm } from './upload-form'

/** /firmware: upload, rollouts (start one, follow them), the releases (size, SHA-256, download counts) and Activate. */
export function FirmwarePage() {
  const { t } = useTranslation()
  const client = useQueryClient()
  const releases = useInfiniteQuery(releasesQuery())
  const activate = useMutation({
    mutationFn: activateRelease,
    onSettled: () => client.invalidateQueries({ queryKey: firmwareKeys.all }),
  })
  const rows = releases.data?.pages.flatMap((p) => p.releases) ?? []
  const columns: Column<Release>[] = [
    { key: 'version', header: t('firmware.version'), cell: (r) => `${r.display_version} (${r.release_id})` },
    { key: 'uploaded', header: t('firmware.uploadedAt'), cell: (r) => `${formatSeconds(r.created_at, '')} · ${r.created_by}` },
    { key: 'active', header: t('firmware.active'), cell: (r) => (r.state === 'active' ? t('firmware.yes') : t('firmware.no')) },
    { key: 'downloads', header: t('firmware.downloads'), cell: (r) => formatNumber(r.download_count), numeric: true },
    { key: 'size', header: t('firmware.size'), cell: (r) => formatBytes(r.size), numeric: true },
    { key: 'sha256', header: t('firmware.sha256'), cell: (r) => <ShaCell sha256={r.sha256} releaseId={r.release_id} /> },
    {
      key: 'actions',
      header: t('firmware.actions'),
      cell: (r) =>
        r.state === 'active' ? null : (
          <ConfirmButton
            label={t('firmware.activate')}
            question={t('firmware.activateQuestion', { version: r.display_version, id: r.release_id })}
            onConfirm={async () => {
              await activate.mutateAsync(r.release_id)
              return ''
            }}
          />
        ),
    },
  ]
  return (
    <>
      <div className="page-head">
        <h1>{t('firmware.title')}</h1>
        <StartRolloutButton releases={rows} />
      </div>
      <UploadForm />
      <div style={{ marginTop: '1rem' }}>
        <RolloutsTable />
      </div>
      <div style={{ marginTop: '1rem' }}>
        {releases.data ? (
          <DataTable
            caption={t('firmware.releases')}
            columns={columns}
            rows={rows}
            rowKey={(r) => r.release_id}
            empty={t('app.none')}
            footer={
              releases.hasNextPage ? (
                <div className="paging">
                  <button type="button" disabled={releases.isFetchingNextPage} onClick={() => void releases.fetchNextPage()}>
                    {t('audit.loadMore')}
                  </button>
                </div>
              ) : null
            }
          />
        ) : (
          <QueryState isPending={releases.isPending} error={releases.error} />
        )}
      </div>
    </>
  )
}
