import { useQuery } from '@tanstack/react-query'
import { lazy, Suspense, useMemo, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { QueryState } from '../../../components/ui/query-state'
import { Region } from '../../../components/ui/region'
import type { TelemetryValue } from '../platform-types'
import { RANGE_NAMES, TELEMETRY_POINTS, telemetryQuery, type RangeName } from './get-telemetry'

// uPlot comes with the chart, fetched only when a device page shows it.
const TelemetryChart = lazy(async () => ({ default: (await import('./telemetry-chart')).TelemetryChart }))

const numeric = (value: TelemetryValue): number | null => (typeof value === 'number' ? value : typeof value === 'boolean' ? Number(value) : null)

/** Keys worth charting: those whose latest value is a number or a boolean. */
export const chartableKeys = (latest: Record<string, { value: TelemetryValue }>) =>
  Object.keys(latest)
    .filter((k) => numeric(latest[k]!.value) !== null)
    .sort()

/** Region "Telemetry": "Key" and "Range" selects over the chart. */
export function TelemetryPanel({ deviceId, keys }: { deviceId: string; keys: string[] }) {
  const { t } = useTranslation()
  const [chosen, setChosen] = useState<string | null>(null)
  const [range, setRange] = useState<RangeName>('1h')
  // The first key until one is chosen; derived during render rather than synced in an effect.
  const key = chosen && keys.includes(chosen) ? chosen : (keys[0] ?? '')
  const query = useQuery({ ...telemetryQuery(deviceId, key, range), enabled: key !== '' })
  const points = useMemo(
    () => (query.data ?? []).flatMap(([ts, v]) => (numeric(v) === null ? [] : [[ts as number, numeric(v)!] as const])),
    [query.data],
  )
  const last = points.at(-1)
  return (
    <Region label={t('platform.telemetry')} className="telemetry">
      <div className="toolbar">
        <label className="inline">
          {t('platform.key')}
          <select value={key} onChange={(e) => setChosen(e.target.value)} disabled={keys.length === 0}>
            {keys.map((k) => (
              <option key={k} value={k}>
                {k}
              </option>
            ))}
          </select>
        </label>
        <label className="inline">
          {t('platform.range')}
          <select value={range} onChange={(e) => setRange(e.target.value as RangeName)}>
            {RANGE_NAMES.map((r) => (
              <option key={r} value={r}>
                {t(`platform.range${r}`)}
              </option>
            ))}
          </select>
        </label>
      </div>
      {keys.length === 0 ? (
        <p className="muted">{t('platform.noTelemetry')}</p>
      ) : query.data ? (
        <Suspense fallback={<p aria-busy="true">{t('app.loading')}</p>}>
          <TelemetryChart
            label={t('platform.telemetry')}
            seriesLabel={key}
            points={points}
            description={
              !last
                ? t('platform.chartEmpty', { key })
                : t(points.length >= TELEMETRY_POINTS ? 'platform.chartCapped' : 'platform.chartSummary', { key, count: points.length, latest: last[1] })
            }
          />
        </Suspense>
      ) : (
        <QueryState isPending={query.isPending} error={query.error} />
      )}
    </Region>
  )
}
