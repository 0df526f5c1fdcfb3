import { keepPreviousData, useQuery } from '@tanstack/react-query'
import { useTranslation } from 'react-i18next'
import { QueryState } from '../../../components/ui/query-state'
import { useUrlCursorPages } from '../../../components/ui/url-cursor-pages'
import { BindMachineButton } from './bind-machine-dialog'
import { machinesQuery } from './get-machines'
import { MachineSearch, useMachineSearch } from './machine-search'
import { MachinesTable } from './machines-table'

/**
 * /machines: pages of the API's cursor (a fleet of thousands stays one page of DOM at a time),
 * the page and the search in the URL (`?q=pnp-1&after=pnp-1099`), and how many are online.
 * Live through the event stream: see events/machine-events.ts.
 */
export function MachinesPage() {
  const { t } = useTranslation()
  const prefix = useMachineSearch()
  const { after, pager } = useUrlCursorPages()
  const query = useQuery({ ...machinesQuery({ prefix, after }), placeholderData: keepPreviousData })
  const counts = query.data?.counts
  return (
    <>
      <div className="page-head">
        <h1>{t('machines.title')}</h1>
        <BindMachineButton />
      </div>
      <div className="list-tools">
        <MachineSearch />
        {counts ? <p className="counts">{t(prefix ? 'machines.onlineMatching' : 'machines.onlineCount', { online: counts.online, total: counts.total })}</p> : null}
      </div>
      {query.data ? (
        <MachinesTable
          rows={query.data.devices}
          footer={pager(query.data.next_after)}
          empty={prefix ? t('machines.noMatch', { prefix }) : undefined}
        />
      ) : (
        <QueryState isPending={query.isPending} error={query.error} />
      )}
    </>
  )
}
