import { useTranslation } from 'react-i18next'
import { Route, Routes } from 'react-router'

/**
 * /platform, /platform/devices, /platform/devices/:id, /platform/logs (contract §12).
 * PLACEHOLDER: the platform pages are built in this folder by the platform engineer.
 */
export function PlatformRoutes() {
  const { t } = useTranslation()
  return (
    <Routes>
      <Route index element={<h1>{t('platform.title')}</h1>} />
      <Route path="*" element={<h1>{t('platform.title')}</h1>} />
    </Routes>
  )
}
