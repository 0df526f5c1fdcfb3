import { useTranslation } from 'react-i18next'
import { formatNumber, formatPercent } from '../../../components/ui/format'
import type { Figures } from './production-types'

/** The figures that can be null (§16: their divisor is 0 or unknown). */
export type NullableFigure = 'oee' | 'availability' | 'performance' | 'quality' | 'cph'

/** "—" for a figure the server could not compute, with why in words for screen readers and as a tooltip. */
export function NoFigure({ figure }: { figure: NullableFigure }) {
  const { t } = useTranslation()
  const why = t(`production.why.${figure}`)
  return (
    <span className="no-figure" title={why}>
      <span aria-hidden="true">—</span>
      <span className="visually-hidden">{why}</span>
    </span>
  )
}

/** A ratio as a percentage, never capped (a machine faster than its rating shows 112%), or "—". */
export function RatioValue({ value, figure }: { value: number | null; figure: Exclude<NullableFigure, 'cph'> }) {
  return value === null ? <NoFigure figure={figure} /> : <>{formatPercent(value)}</>
}

/** Placements per productive hour, whole, or "—". */
export function CphValue({ value }: { value: number | null }) {
  return value === null ? <NoFigure figure="cph" /> : <>{formatNumber(value, { maximumFractionDigits: 0 })}</>
}

export function CountValue({ value }: { value: number }) {
  return <>{formatNumber(value)}</>
}

/** A window's figures as the items of a `<dl className="figures">`, in the tables' order. */
export function FigureItems({ figures }: { figures: Figures }) {
  const { t } = useTranslation()
  const items = [
    ['oee', <RatioValue key="oee" value={figures.oee} figure="oee" />],
    ['availability', <RatioValue key="a" value={figures.availability} figure="availability" />],
    ['performance', <RatioValue key="p" value={figures.performance} figure="performance" />],
    ['quality', <RatioValue key="q" value={figures.quality} figure="quality" />],
    ['cph', <CphValue key="c" value={figures.cph} />],
    ['placed', <CountValue key="pl" value={figures.placed} />],
    ['missed', <CountValue key="m" value={figures.missed} />],
  ] as const
  return items.map(([name, value]) => (
    <div key={name}>
      <dt>{t(`production.${name}`)}</dt>
      <dd>{value}</dd>
    </div>
  ))
}
