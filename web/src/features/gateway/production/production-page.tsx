import { useQuery } from '@tanstack/react-query'
import { useId, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { Link, useSearchParams } from 'react-router'
import { DataTable, type Column } from '../../../components/ui/data-table'
import { formatPercent } from '../../../components/ui/format'
import { QueryState } from '../../../components/ui/query-state'
import { labelKeyListQuery } from '../labels/get-label-keys'
import { BarChart } from './bar-chart'
import { CountValue, CphValue, FigureItems, RatioValue } from './figure-cells'
import { fleetProductionQuery, type GroupBy } from './get-production'
import type { ProductionGroup } from './production-types'
import { RangeSelect } from './range-select'
import { isRangeId, type RangeId } from './ranges'
import './production.css'

/** A React key for a group: the machines without the label (key null) apart from a label value spelled "null". */
const groupKey = (g: ProductionGroup) => (g.key === null ? '\u0000without' : `=${g.key}`)

/** Rows shown at first (a fleet grouped by machine may have thousands); "Show more" adds as many again. */
const ROWS_SHOWN = 100
/** Groups drawn in the chart: the first ones as the server sends them; the table has them all. */
const CHART_GROUPS = 30

/**
 * /production: the caller's machines grouped by machine or by a label key, over a range ending
 * now (§16 `GET /api/v1/production`): chart "OEE" and table "Production". The grouping and the
 * range are in the URL (`?group_by=label:line&range=7d`).
 */
export function ProductionPage() {
  const { t } = useTranslation()
  const [params, setParams] = useSearchParams()
  const groupParam = params.get('group_by') ?? 'device'
  const groupBy: GroupBy = groupParam.startsWith('label:') ? { kind: 'label', key: groupParam.slice('label:'.length) } : { kind: 'device' }
  const rangeParam = params.get('range')
  const range: RangeId = isRangeId(rangeParam) ? rangeParam : '24h'
  const set = (name: string, value: string) =>
    setParams(
      (p) => {
        const next = new URLSearchParams(p)
        next.set(name, value)
        return next
      },
      { replace: true },
    )
  const query = useQuery(fleetProductionQuery(groupBy, range))
  const data = query.data
  return (
    <>
      <h1>{t('production.title')}</h1>
      <div className="filters">
        <GroupBySelect value={groupParam} onChange={(v) => set('group_by', v)} />
        <RangeSelect value={range} onChange={(v) => set('range', v)} />
      </div>
      {data ? (
        <>
          <FleetTotal total={data.total} />
          <h2>{t('production.oee')}</h2>
          <BarChart
            label={t('production.oee')}
            description={
              data.groups.length > CHART_GROUPS
                ? t('production.oeeChartFirst', { shown: CHART_GROUPS, count: data.groups.length })
                : t('production.oeeChart')
            }
            reference={1}
            referenceText={formatPercent(1)}
            bars={data.groups.slice(0, CHART_GROUPS).map((g) => ({
              key: groupKey(g),
              label: groupName(g.key),
              value: g.oee,
              text: g.oee === null ? '—' : formatPercent(g.oee),
            }))}
          />
          <ProductionTable groups={data.groups} groupBy={groupBy} groupName={groupName} />
        </>
      ) : (
        <QueryState isPending={query.isPending} error={query.error} />
      )}
    </>
  )

  function groupName(key: string | null): string {
    if (groupBy.kind === 'device') return key ?? ''
    return key === null ? t('production.noLabel', { key: groupBy.key }) : `${groupBy.key}=${key}`
  }
}

/** "Group by": Machine, and each label key in use over the caller's machines. */
function GroupBySelect({ value, onChange }: { value: string; onChange: (value: string) => void }) {
  const { t } = useTranslation()
  const id = useId()
  const keys = useQuery(labelKeyListQuery())
  const labelKeys = keys.data?.keys.map((k) => k.key) ?? []
  // A grouping from the URL whose key is not (yet) listed still shows as chosen.
  const current = value.startsWith('label:') ? value.slice('label:'.length) : null
  if (current !== null && !labelKeys.includes(current)) labelKeys.push(current)
  return (
    <div>
      <label htmlFor={id}>{t('production.groupBy')}</label>
      <select id={id} value={value} onChange={(e) => onChange(e.target.value)}>
        <option value="device">{t('production.byMachine')}</option>
        {labelKeys.map((key) => (
          <option key={key} value={`label:${key}`}>
            {t('production.byLabel', { key })}
          </option>
        ))}
      </select>
    </div>
  )
}

/** The whole selection's figures, above the groups. */
function FleetTotal({ total }: { total: FleetTotalFigures }) {
  const { t } = useTranslation()
  return (
    <dl className="figures" aria-label={t('production.total')}>
      <div>
        <dt>{t('production.machines')}</dt>
        <dd>
          <CountValue value={total.devices} />
        </dd>
      </div>
      <FigureItems figures={total} />
    </dl>
  )
}

type FleetTotalFigures = Omit<ProductionGroup, 'key'>

function ProductionTable({ groups, groupBy, groupName }: { groups: ProductionGroup[]; groupBy: GroupBy; groupName: (key: string | null) => string }) {
  const { t } = useTranslation()
  const [shown, setShown] = useState(ROWS_SHOWN)
  const columns: Column<ProductionGroup>[] = [
    {
      key: 'group',
      header: t('production.group'),
      cell: (g) => (groupBy.kind === 'device' && g.key !== null ? <Link to={`/machines/${encodeURIComponent(g.key)}`}>{g.key}</Link> : groupName(g.key)),
    },
    { key: 'machines', header: t('production.machines'), cell: (g) => <CountValue value={g.devices} />, numeric: true },
    { key: 'oee', header: t('production.oee'), cell: (g) => <RatioValue value={g.oee} figure="oee" />, numeric: true },
    { key: 'availability', header: t('production.availability'), cell: (g) => <RatioValue value={g.availability} figure="availability" />, numeric: true },
    { key: 'performance', header: t('production.performance'), cell: (g) => <RatioValue value={g.performance} figure="performance" />, numeric: true },
    { key: 'quality', header: t('production.quality'), cell: (g) => <RatioValue value={g.quality} figure="quality" />, numeric: true },
    { key: 'cph', header: t('production.cph'), cell: (g) => <CphValue value={g.cph} />, numeric: true },
    { key: 'placed', header: t('production.placed'), cell: (g) => <CountValue value={g.placed} />, numeric: true },
    { key: 'missed', header: t('production.missed'), cell: (g) => <CountValue value={g.missed} />, numeric: true },
  ]
  return (
    <DataTable
      caption={t('production.table')}
      columns={columns}
      rows={groups.slice(0, shown)}
      rowKey={groupKey}
      empty={t('production.empty')}
      footer={
        groups.length > shown ? (
          <div className="paging">
            <span>{t('production.showing', { shown, count: groups.length })}</span>
            <button type="button" onClick={() => setShown((n) => n + ROWS_SHOWN)}>
              {t('production.showMore')}
            </button>
          </div>
        ) : null
      }
    />
  )
}
