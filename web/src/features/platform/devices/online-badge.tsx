import { useTranslation } from 'react-i18next'

export function OnlineBadge({ online }: { online: boolean }) {
  const { t } = useTranslation()
  return <span className={online ? 'badge ok' : 'badge off'}>{online ? t('platform.isOnline') : t('platform.isOffline')}</span>
}
