import { useTranslation } from 'react-i18next'
import { useLiveStatus } from '../../events/use-event-stream'

/** Contract §12: the header's `role="status"` reads "Live" while the event stream is open, "Reconnecting" while not. */
export function LiveStatusBadge() {
  const { t } = useTranslation()
  const status = useLiveStatus()
  return (
    <span role="status" className={status === 'live' ? 'live-status live' : 'live-status down'}>
      {status === 'live' ? t('stream.live') : t('stream.reconnecting')}
    </span>
  )
}
