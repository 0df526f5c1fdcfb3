import { useId } from 'react'
import { useTranslation } from 'react-i18next'
import { formatDay, formatDuration, formatHour, formatShortTime } from '../../../components/ui/format'
import { MACHINE_STATES, type SeriesBucket } from './production-types'

const WIDTH = 720
const HEIGHT = 120
const AXIS = 18

/** Where to put about `count` time ticks over the buckets: every n-th bucket start. */
export function tickIndexes(length: number, count = 6): number[] {
  if (length === 0) return []
  const step = Math.max(1, Math.ceil(length / count))
  const out: number[] = []
  for (let i = 0; i < length; i += step) out.push(i)
  return out
}

/** A tick's text: the time of day over up to two days of hours, else the day. */
export const tickText = (start: number, hours: number) => (hours > 48 ? formatDay(start * 1000) : formatHour(start * 1000))

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
        {tickIndexes(buckets.length).map((i) => (
          <text key={i} x={i * width} y={HEIGHT - 4} className="tick">
            {tickText(buckets[i]!.start, buckets.length)}
          </text>
        ))}
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
