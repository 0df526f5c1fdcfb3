import { keepPreviousData, useQuery } from '@tanstack/react-query'
import { useState } from 'react'
import { useTranslation } from 'react-i18next'
import { QueryState } from '../../../components/ui/query-state'
import { BindMachineButton } from './bind-machine-dialog'
import { machinesQuery } from './get-machines'
import { MachinesTable } from './machines-table'

/** /machines: pages of the API's cursor (a fleet of thousands stays one page of DOM at a time). */
export function MachinesPage() {
  const { t } = useTranslation()
  // Cursors of the pages visited so far; the last one is the page shown.
  const [cursors, setCursors] = useState<(string | null)[]>([null])
  const after = cursors[cursors.length - 1]!
  const query = useQuery({ ...machinesQuery(after), placeholderData: keepPreviousData })
  const next = query.data?.next_after
  const paging =
    cursors.length > 1 || next ? (
      <div className="paging">
        <button type="button" disabled={cursors.length <= 1} onClick={() => setCursors((c) => c.slice(0, -1))}>
          {t('app.previousPage')}
        </button>
        <span>{t('app.page', { page: cursors.length })}</span>
        <button type="button" disabled={!next} onClick={() => next && setCursors((c) => [...c, next])}>
          {t('app.nextPage')}
        </button>
      </div>
    ) : null
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
