import { keepPreviousData, useQuery } from '@tanstack/react-query'
import { useTranslation } from 'react-i18next'
import { useCursorPages } from '../../../components/ui/cursor-pages'
import { QueryState } from '../../../components/ui/query-state'
import { BindMachineButton } from './bind-machine-dialog'
import { machinesQuery } from './get-machines'
import { MachinesTable } from './machines-table'

/** /machines: pages of the API's cursor (a fleet of thousands stays one page of DOM at a time). */
export function MachinesPage() {
  const { t } = useTranslation()
  const { after, pager } = useCursorPages()
  const query = useQuery({ ...machinesQuery(after), placeholderData: keepPreviousData })
  const paging = pager(query.data?.next_after)
  return (
    <>
      <div className="page-head">
        <h1>{t('machines.title')}</h1>
        <BindMachineButton />
      </div>
      {query.data ? <MachinesTable rows={query.data.devices} footer={paging} /> : <QueryState isPending={query.isPending} error={query.error} />}
    </>
  )
}
