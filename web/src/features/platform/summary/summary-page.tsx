import { useQuery } from '@tanstack/react-query'
import { useTranslation } from 'react-i18next'
import { Link } from 'react-router'
import { formatNumber } from '../../../components/ui/format'
import { QueryState } from '../../../components/ui/query-state'
import { Region } from '../../../components/ui/region'
import { COMMAND_STATUSES } from '../platform-types'
import { summaryQuery } from './get-summary'

/** /platform: online devices and command counts (live through §11), links to devices and the operation log. */
export function SummaryPage() {
  const { t } = useTranslation()
  const summary = useQuery(summaryQuery())
  const s = summary.data
  return (
    <>
      <h1>{t('platform.title')}</h1>
      <p className="muted">{t('platform.summaryHelp')}</p>
      <nav aria-label={t('platform.title')} className="links">
        <Link to="/platform/devices">{t('platform.devices')}</Link>
        <Link to="/platform/logs">{t('platform.operationLog')}</Link>
      </nav>
      {s ? (
        <div className="grid">
          <Region label={t('platform.onlineDevices')}>
            <p className="big">{t('platform.onlineOf', { online: s.devices.online, total: s.devices.total })}</p>
            <dl className="kv">
              <dt>{t('platform.telemetry24h')}</dt>
              <dd>{formatNumber(s.telemetry_24h)}</dd>
              <dt>{t('platform.errors24h')}</dt>
              <dd>{formatNumber(s.errors_24h)}</dd>
            </dl>
          </Region>
          <Region label={t('platform.commandCounts')}>
            <dl className="kv">
              {COMMAND_STATUSES.map((status) => (
                <div key={status} className="kv-row">
                  <dt>{t(`platform.statusNames.${status}`)}</dt>
                  <dd>{formatNumber(s.commands[status])}</dd>
                </div>
              ))}
            </dl>
          </Region>
        </div>
      ) : (
        <QueryState isPending={summary.isPending} error={summary.error} />
      )}
    </>
  )
}
