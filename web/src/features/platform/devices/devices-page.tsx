import { keepPreviousData, useQuery } from '@tanstack/react-query'
import { useTranslation } from 'react-i18next'
import { Link } from 'react-router'
import { DataTable, type Column } from '../../../components/ui/data-table'
import { formatMillis } from '../../../components/ui/format'
import { useCursorPages } from '../../../components/ui/cursor-pages'
import { QueryState } from '../../../components/ui/query-state'
import type { PlatformDevice } from '../platform-types'
import { AddDeviceButton } from './add-device-dialog'
import { devicesQuery } from './get-devices'
import { OnlineBadge } from './online-badge'

/** /platform/devices: one page of the API's cursor at a time, so 5,000 devices stay 100 rows of DOM. */
export function DevicesPage() {
  const { t } = useTranslation()
  const { after, pager } = useCursorPages()
  const query = useQuery({ ...devicesQuery(after), placeholderData: keepPreviousData })
  const columns: Column<PlatformDevice>[] = [
    { key: 'device', header: t('platform.device'), cell: (d) => <Link to={`/platform/devices/${encodeURIComponent(d.device_id)}`}>{d.device_id}</Link> },
    { key: 'online', header: t('platform.online'), cell: (d) => <OnlineBadge online={d.online} /> },
    { key: 'model', header: t('platform.model'), cell: (d) => d.model ?? '' },
    { key: 'firmware', header: t('platform.firmware'), cell: (d) => d.firmware_version ?? '' },
    { key: 'seen', header: t('platform.lastSeen'), cell: (d) => formatMillis(d.last_online_at, t('app.never')) },
  ]
  const paging = pager(query.data?.next_after)
  return (
    <>
      <p className="crumbs">
        <Link to="/platform">{t('platform.title')}</Link>
      </p>
      <div className="page-head">
        <h1>{t('platform.devices')}</h1>
        <AddDeviceButton />
      </div>
      {query.data ? (
        <DataTable
          caption={t('platform.devices')}
          columns={columns}
          rows={query.data.devices}
          rowKey={(d) => d.device_id}
          empty={t('platform.devicesEmpty')}
          footer={paging}
        />
      ) : (
        <QueryState isPending={query.isPending} error={query.error} />
      )}
    </>
  )
}
