import { useTranslation } from 'react-i18next'
import { DataTable, type Column } from '../../../components/ui/data-table'
import type { PlatformCommand } from '../platform-types'

/** Table "Commands" (Id, Action, Status, Attempts); rows change live through the query cache. */
export function CommandsTable({ rows }: { rows: readonly PlatformCommand[] }) {
  const { t } = useTranslation()
  const columns: Column<PlatformCommand>[] = [
    { key: 'id', header: t('platform.id'), cell: (c) => c.id, numeric: true },
    { key: 'action', header: t('platform.action'), cell: (c) => c.action },
    { key: 'status', header: t('platform.status'), cell: (c) => <span className={`status ${c.status}`}>{t(`platform.statusNames.${c.status}`)}</span> },
    { key: 'attempts', header: t('platform.attempts'), cell: (c) => c.attempts, numeric: true },
  ]
  return <DataTable caption={t('platform.commands')} columns={columns} rows={rows} rowKey={(c) => String(c.id)} empty={t('platform.commandsEmpty')} />
}
