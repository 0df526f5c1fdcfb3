import { useTranslation } from 'react-i18next'
import { DataTable, type Column } from '../../../components/ui/data-table'
import { formatPercent } from '../../../components/ui/format'
import { CountValue } from './figure-cells'
import type { FeederFigures } from './production-types'

/** The feeder to look at first: the server sends the worst first (§16); it stands out when it missed any. */
export const worstFeeder = (feeders: readonly FeederFigures[]): FeederFigures | undefined => (feeders[0] && feeders[0].missed > 0 ? feeders[0] : undefined)

/** Table "Feeders" in the server's order (worst first), the worst marked by a "Worst" tag and a highlight. */
export function FeedersTable({ feeders }: { feeders: readonly FeederFigures[] }) {
  const { t } = useTranslation()
  const worst = worstFeeder(feeders)
  const columns: Column<FeederFigures>[] = [
    {
      key: 'feeder',
      header: t('production.feeder'),
      cell: (f) => (
        <>
          {f.feeder}
          {f === worst ? (
            <>
              {' '}
              <span className="badge worst">
                <span aria-hidden="true">▲ </span>
                {t('production.worst')}
              </span>
            </>
          ) : null}
        </>
      ),
    },
    { key: 'placed', header: t('production.placed'), cell: (f) => <CountValue value={f.placed} />, numeric: true },
    { key: 'missed', header: t('production.missed'), cell: (f) => <CountValue value={f.missed} />, numeric: true },
    { key: 'rate', header: t('production.missRate'), cell: (f) => (f.miss_rate === null ? '—' : formatPercent(f.miss_rate, 2)), numeric: true },
  ]
  return (
    <DataTable
      caption={t('production.feeders')}
      columns={columns}
      rows={feeders}
      rowKey={(f) => f.feeder}
      empty={t('production.noFeeders')}
      rowClassName={(f) => (f === worst ? 'worst-row' : undefined)}
    />
  )
}
