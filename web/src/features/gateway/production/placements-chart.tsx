import { useId } from 'react'
import { useTranslation } from 'react-i18next'
import { formatNumber, formatShortTime } from '../../../components/ui/format'
import type { SeriesBucket } from './production-types'
import { TimeTicks } from './time-ticks'

const WIDTH = 720
const HEIGHT = 140
const AXIS = 18

/** Chart "Placements per hour": placed (and missed on top) in each hour, the peak and the sums in words. */
export function PlacementsChart({ buckets }: { buckets: readonly SeriesBucket[] }) {
  const { t } = useTranslation()
  const descriptionId = useId()
  const width = WIDTH / Math.max(1, buckets.length)
  const top = Math.max(0, ...buckets.map((b) => b.placed + b.missed))
  const peak = Math.max(1, top)
  const plot = HEIGHT - AXIS - 12
  const placed = buckets.reduce((s, b) => s + b.placed, 0)
  const missed = buckets.reduce((s, b) => s + b.missed, 0)
  return (
    <figure className="chart">
      <h3>{t('production.placementsPerHour')}</h3>
      <svg role="img" aria-label={t('production.placementsPerHour')} aria-describedby={descriptionId} viewBox={`0 0 ${WIDTH} ${HEIGHT}`} width="100%">
        <text x={WIDTH} y={10} textAnchor="end" className="tick">
          {formatNumber(top)}
        </text>
        {buckets.map((b, i) => {
          const hp = (plot * b.placed) / peak
          const hm = (plot * b.missed) / peak
          const base = HEIGHT - AXIS
          return (
            <g key={b.start}>
              <title>{`${formatShortTime(b.start * 1000)}: ${t('production.placedMissed', { placed: b.placed, missed: b.missed })}`}</title>
              {hp > 0 ? <rect x={i * width} y={base - hp} width={Math.max(0.5, width - 1)} height={hp} className="fill-placed" /> : null}
              {hm > 0 ? <rect x={i * width} y={base - hp - hm} width={Math.max(0.5, width - 1)} height={hm} className="fill-missed" /> : null}
            </g>
          )
        })}
        <TimeTicks buckets={buckets} columnWidth={width} y={HEIGHT - 4} />
      </svg>
      <figcaption id={descriptionId}>
        <ul className="legend">
          <li>
            <span className="swatch fill-placed" aria-hidden="true" />
            {t('production.placedTotal', { count: placed })}
          </li>
          <li>
            <span className="swatch fill-missed" aria-hidden="true" />
            {t('production.missedTotal', { count: missed })}
          </li>
          <li>{t('production.peakHour', { count: top })}</li>
        </ul>
      </figcaption>
    </figure>
  )
}
