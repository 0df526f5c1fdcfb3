import { keepPreviousData, useQuery } from '@tanstack/react-query'
import { useTranslation } from 'react-i18next'
import { QueryState } from '../../../components/ui/query-state'
import { useUrlCursorPages } from '../../../components/ui/url-cursor-pages'
import { selectorProblemOf } from '../labels/selector-problem'
import { BindMachineButton } from './bind-machine-dialog'
import { machinesQuery } from './get-machines'
import { useSelectorFilter } from './machine-filters'
import { MachineSearch, useMachineSearch } from './machine-search'
import { MachinesTable } from './machines-table'
import { SelectorFilter } from './selector-filter'

/**
 * /machines: pages of the API's cursor (a fleet of thousands stays one page of DOM at a time),
 * the page, the search and the label selector in the URL (`?q=pnp-1&selector=site%3Dsz&after=pnp-1099`),
 * and how many of the machines listed are online. Live through the event stream: see
 * events/machine-events.ts.
 */
export function MachinesPage() {
  const { t } = useTranslation()
  const prefix = useMachineSearch()
  const selector = useSelectorFilter()
  const { after, pager } = useUrlCursorPages()
  const query = useQuery({ ...machinesQuery({ prefix, selector, after }), placeholderData: keepPreviousData })
  // A malformed selector is said at its field; the list has nothing to show for it.
  const selectorProblem = selectorProblemOf(query.error)
  const counts = query.data?.counts
  const filtered = prefix !== '' || selector !== ''
  return (
    <>
      <div className="page-head">
        <h1>{t('machines.title')}</h1>
        <BindMachineButton />
      </div>
      <div className="list-tools">
        <div className="list-filters">
          <MachineSearch />
          <SelectorFilter problem={selectorProblem} />
        </div>
        {counts ? (
          <p className="counts">
            {t(filtered ? 'machines.onlineMatching' : 'machines.onlineCount', { online: counts.online, total: counts.total })}
          </p>
        ) : null}
      </div>
      {query.data ? (
        <MachinesTable rows={query.data.devices} footer={pager(query.data.next_after)} empty={filtered ? noMatchText() : undefined} />
      ) : selectorProblem ? null : (
        <QueryState isPending={query.isPending} error={query.error} />
      )}
    </>
  )

  function noMatchText(): string {
    if (selector && prefix) return t('labels.noMatchBoth', { prefix, selector })
    if (selector) return t('labels.noMatchSelector', { selector })
    return t('machines.noMatch', { prefix })
  }
}
