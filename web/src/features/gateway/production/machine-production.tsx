import { useQuery } from '@tanstack/react-query'
import { useState } from 'react'
import { useTranslation } from 'react-i18next'
import { QueryState } from '../../../components/ui/query-state'
import { Region } from '../../../components/ui/region'
import { CountValue, FigureItems } from './figure-cells'
import { FeedersTable } from './feeders-table'
import { machineProductionQuery, productionSeriesQuery } from './get-production'
import { JobsTable } from './jobs-table'
import { CurrentState } from './machine-state'
import { PlacementsChart } from './placements-chart'
import type { MachineProduction } from './production-types'
import { RangeSelect } from './range-select'
import type { RangeId } from './ranges'
import { StateTimelineChart } from './state-timeline-chart'
import './production.css'

/**
 * Region "Production" of /machines/{id} (§16): the current state (fetched with the figures, then live), the range's figures,
 * charts "State timeline" and "Placements per hour" (hour by hour), table "Feeders" worst first,
 * and table "Jobs".
 */
export function MachineProductionRegion({ id, alive }: { id: string; alive: boolean | undefined }) {
  const { t } = useTranslation()
  const [range, setRange] = useState<RangeId>('24h')
  const figures = useQuery(machineProductionQuery(id, range))
  const series = useQuery(productionSeriesQuery(id, range))
  return (
    <Region label={t('production.region')} className="production">
      <div className="production-head">
        <CurrentState id={id} alive={alive} fetched={figures.data?.state} />
        <RangeSelect value={range} onChange={setRange} />
      </div>
      {/* One alert for the region when the figures cannot be read (the three reads fail alike). */}
      {figures.data ? <MachineFigures figures={figures.data} /> : <QueryState isPending={figures.isPending} error={figures.error ?? series.error} />}
      {series.data ? (
        <div className="charts">
          <StateTimelineChart buckets={series.data.buckets} />
          <PlacementsChart buckets={series.data.buckets} />
        </div>
      ) : figures.data ? (
        <QueryState isPending={series.isPending} error={series.error} />
      ) : null}
      <div className="production-tables">
        {figures.data ? <FeedersTable feeders={figures.data.feeders} /> : null}
        {figures.error ? null : <JobsTable id={id} />}
      </div>
    </Region>
  )
}

function MachineFigures({ figures }: { figures: MachineProduction }) {
  const { t } = useTranslation()
  return (
    <dl className="figures" aria-label={t('production.figures')}>
      <FigureItems figures={figures} />
      <div>
        <dt>{t('production.ratedCph')}</dt>
        <dd>{figures.rated_cph === null ? t('production.notReported') : <CountValue value={figures.rated_cph} />}</dd>
      </div>
    </dl>
  )
}
