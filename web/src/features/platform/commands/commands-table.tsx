import { useTranslation } from 'react-i18next'
import { DataTable, type Column } from '../../../components/ui/data-table'
import { formatNumber } from '../../../components/ui/format'
import { ForwardedAnswer } from '../../../components/ui/forwarded-answer'
import type { PlatformCommand } from '../platform-types'

/** What a device reported (§8 `result`, `error`): machine-defined, so shown by the forwarded-answer rule; none yet: a dash. */
function Reported({ value }: { value: unknown }) {
  return value === null || value === undefined ? <span className="muted">—</span> : <ForwardedAnswer value={value} />
}

/** Table "Commands" (Id, Action, Status, Attempts, Result, Error); rows change live through the query cache. */
export function CommandsTable({ rows }: { rows: readonly PlatformCommand[] }) {
  const { t } = useTranslation()
  const columns: Column<PlatformCommand>[] = [
    { key: 'id', header: t('platform.id'), cell: (c) => c.id, numeric: true },
    { key: 'action', header: t('platform.action'), cell: (c) => c.action },
    { key: 'status', header: t('platform.status'), cell: (c) => <span className={`status ${c.status}`}>{t(`platform.statusNames.${c.status}`)}</span> },
    { key: 'attempts', header: t('platform.attempts'), cell: (c) => formatNumber(c.attempts), numeric: true },
    { key: 'result', header: t('platform.result'), cell: (c) => <Reported value={c.result} /> },
    { key: 'error', header: t('platform.error'), cell: (c) => <Reported value={c.error} /> },
  ]
  return <DataTable caption={t('platform.commands')} columns={columns} rows={rows} rowKey={(c) => String(c.id)} empty={t('platform.commandsEmpty')} />
}
