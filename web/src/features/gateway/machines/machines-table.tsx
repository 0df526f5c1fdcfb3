import { useTranslation } from 'react-i18next'
import { Link } from 'react-router'
import type { DeviceRecord } from '../../../api/types'
import { DataTable, type Column } from '../../../components/ui/data-table'
import { formatSeconds } from '../../../components/ui/format'
import { LabelChips } from '../labels/label-chips'

/** Chips a row shows before counting the rest ("+2 more"). */
const LABELS_SHOWN = 4

export function MachinesTable({ rows, footer, empty }: { rows: readonly DeviceRecord[]; footer?: React.ReactNode; empty?: string }) {
  const { t } = useTranslation()
  const columns: Column<DeviceRecord>[] = [
    { key: 'machine', header: t('machines.machine'), cell: (d) => <Link to={`/machines/${encodeURIComponent(d.device_id)}`}>{d.device_id}</Link> },
    {
      key: 'status',
      header: t('machines.status'),
      cell: (d) => <span className={d.alive ? 'badge ok' : 'badge off'}>{d.alive ? t('machines.online') : t('machines.offline')}</span>,
    },
    { key: 'version', header: t('machines.version'), cell: (d) => d.version },
    { key: 'heartbeat', header: t('machines.lastHeartbeat'), cell: (d) => formatSeconds(d.last_heartbeat, t('app.never')) },
    { key: 'labels', header: t('labels.labels'), cell: (d) => <LabelChips labels={d.labels} max={LABELS_SHOWN} /> },
  ]
  return <DataTable caption={t('machines.title')} columns={columns} rows={rows} rowKey={(d) => d.device_id} empty={empty ?? t('machines.empty')} footer={footer} />
}
