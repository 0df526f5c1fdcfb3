import { useTranslation } from 'react-i18next'
import { Alert } from './alert'

/** Loading text or the error of a query, in the place its data would be. */
export function QueryState({ isPending, error }: { isPending: boolean; error: Error | null }) {
  const { t } = useTranslation()
  if (error) return <Alert>{error.message}</Alert>
  if (isPending) return <p aria-busy="true">{t('app.loading')}</p>
  return null
}
