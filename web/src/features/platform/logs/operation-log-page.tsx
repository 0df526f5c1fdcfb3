import { useInfiniteQuery } from '@tanstack/react-query'
import { useTranslation } from 'react-i18next'
import { Link } from 'react-router'
import { operationLogQuery } from './get-logs'
import { LogsTable } from './logs-table'

/** /platform/logs: table "Operation log" (every admin write), paged with "Load more". */
export function OperationLogPage() {
  const { t } = useTranslation()
  const query = useInfiniteQuery(operationLogQuery())
  return (
    <>
      <p className="crumbs">
        <Link to="/platform">{t('platform.title')}</Link>
      </p>
      <h1>{t('platform.operationLog')}</h1>
      <LogsTable caption={t('platform.operationLog')} query={query} variant="operation" empty={t('platform.operationEmpty')} />
    </>
  )
}
