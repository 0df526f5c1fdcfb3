import { useInfiniteQuery } from '@tanstack/react-query'
import { useState } from 'react'
import { useTranslation } from 'react-i18next'
import { Region } from '../../../components/ui/region'
import { ConfirmButton } from '../../../components/ui/confirm-button'
import { useClearLogs } from './clear-logs'
import { deviceLogsQuery, LOG_LEVELS } from './get-logs'
import { LogsTable } from './logs-table'

/** Table "Logs" of one device with a "Level" filter, "Load more" and "Clear logs". */
export function DeviceLogs({ deviceId }: { deviceId: string }) {
  const { t } = useTranslation()
  const [level, setLevel] = useState('')
  const query = useInfiniteQuery(deviceLogsQuery(deviceId, level))
  const clear = useClearLogs(deviceId)
  return (
    <Region label={t('platform.logs')} className="logs">
      <div className="toolbar">
        <label className="inline">
          {t('platform.level')}
          <select value={level} onChange={(e) => setLevel(e.target.value)}>
            <option value="">{t('platform.allLevels')}</option>
            {LOG_LEVELS.map((l) => (
              <option key={l} value={l}>
                {l}
              </option>
            ))}
          </select>
        </label>
        <ConfirmButton
          label={t('platform.clearLogs')}
          question={t('platform.clearLogsQuestion', { id: deviceId })}
          onConfirm={async () => t('platform.deleted', { count: (await clear.mutateAsync()).deleted })}
        />
      </div>
      <LogsTable caption={t('platform.logs')} query={query} variant="device" empty={t('platform.logsEmpty')} />
    </Region>
  )
}
