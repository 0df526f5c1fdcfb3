import { useQuery } from '@tanstack/react-query'
import { useTranslation } from 'react-i18next'
import { Link, useParams } from 'react-router'
import { formatMillis } from '../../../components/ui/format'
import { QueryState } from '../../../components/ui/query-state'
import { Region } from '../../../components/ui/region'
import { CommandsPanel } from '../commands/commands-panel'
import { OnlineBadge } from '../devices/online-badge'
import { DeviceLogs } from '../logs/device-logs'
import { chartableKeys, TelemetryPanel } from '../telemetry/telemetry-panel'
import { deviceDetailQuery } from './get-device-detail'

/** /platform/devices/:id: details, telemetry chart, logs, command form and commands. */
export function DevicePage() {
  const { t } = useTranslation()
  const id = useParams().id ?? ''
  const detail = useQuery(deviceDetailQuery(id))
  const device = detail.data?.device
  return (
    <>
      <p className="crumbs">
        <Link to="/platform/devices">{t('platform.allDevices')}</Link>
      </p>
      <h1>{id}</h1>
      {detail.data && device ? (
        <div className="device-page">
          <Region label={t('platform.details')}>
            <dl className="kv">
              <dt>{t('platform.online')}</dt>
              <dd>
                <OnlineBadge online={device.online} />
              </dd>
              <dt>{t('platform.lastSeen')}</dt>
              <dd>{formatMillis(device.last_online_at, t('app.never'))}</dd>
              <dt>{t('platform.model')}</dt>
              <dd>{device.model ?? ''}</dd>
              <dt>{t('platform.firmware')}</dt>
              <dd>{device.firmware_version ?? ''}</dd>
              <dt>{t('platform.ip')}</dt>
              <dd>{device.ip ?? ''}</dd>
              <dt>{t('platform.expression')}</dt>
              <dd>{device.expression ?? ''}</dd>
              <dt>{t('platform.created')}</dt>
              <dd>{formatMillis(device.created_at, t('app.never'))}</dd>
            </dl>
          </Region>
          <TelemetryPanel deviceId={id} keys={chartableKeys(detail.data.latest_telemetry)} />
          <CommandsPanel deviceId={id} />
          <DeviceLogs deviceId={id} />
        </div>
      ) : (
        <QueryState isPending={detail.isPending} error={detail.error} />
      )}
    </>
  )
}
