import { useId } from 'react'
import { useTranslation } from 'react-i18next'
import { formatDuration, formatShortTime } from '../../../components/ui/format'
import { MACHINE_STATES, type SeriesBucket } from './production-types'
import { TimeTicks } from './time-ticks'

const WIDTH = 720
const HEIGHT = 120
const AXIS = 18

/**
 * Chart "State timeline": one column per hour, stacked by the seconds spent in each state, and
 * a legend saying each state's color and its total time as text (not color alone).
 */
export function StateTimelineChart({ buckets }: { buckets: readonly SeriesBucket[] }) {
  const { t } = useTranslation()
  const descriptionId = useId()
  const width = WIDTH / Math.max(1, buckets.length)
  const totals = MACHINE_STATES.map((state) => ({ state, seconds: buckets.reduce((sum, b) => sum + (b.seconds[state] ?? 0), 0) }))
  const plot = HEIGHT - AXIS
  return (
    <figure className="chart">
      <h3>{t('production.stateTimeline')}</h3>
      <svg role="img" aria-label={t('production.stateTimeline')} aria-describedby={descriptionId} viewBox={`0 0 ${WIDTH} ${HEIGHT}`} width="100%">
        {buckets.map((b, i) => {
          let y = plot
          return (
            <g key={b.start}>
              <title>{`${formatShortTime(b.start * 1000)}: ${MACHINE_STATES.filter((s) => (b.seconds[s] ?? 0) > 0)
                .map((s) => `${t(`production.states.${s}`)} ${formatDuration(b.seconds[s] * 1000)}`)
                .join(', ')}`}</title>
              {MACHINE_STATES.map((state) => {
                const h = (plot * Math.min(3600, b.seconds[state] ?? 0)) / 3600
                if (h <= 0) return null
                y -= h
                return <rect key={state} x={i * width} y={y} width={Math.max(0.5, width - 0.5)} height={h} className={`fill-${state}`} />
              })}
            </g>
          )
        })}
        <TimeTicks buckets={buckets} columnWidth={width} y={HEIGHT - 4} />
      </svg>
      <figcaption id={descriptionId}>
        <ul className="legend">
          {totals
            .filter((x) => x.seconds > 0)
            .map(({ state, seconds }) => (
              <li key={state}>
                <span className={`swatch fill-${state}`} aria-hidden="true" />
                {t('production.stateTotal', { state: t(`production.states.${state}`), time: formatDuration(seconds * 1000) })}
              </li>
            ))}
          {totals.every((x) => x.seconds === 0) ? <li>{t('production.noStates')}</li> : null}
        </ul>
      </figcaption>
    </figure>
  )
}
