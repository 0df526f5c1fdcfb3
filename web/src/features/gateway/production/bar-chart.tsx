import { useId } from 'react'

export interface Bar {
  key: string
  label: string
  /** null: no figure (drawn as "—", no bar). */
  value: number | null
  /** The value as shown beside the bar. */
  text: string
}

const ROW = 24
const LABEL_W = 170
const VALUE_W = 70
const WIDTH = 640

/**
 * Horizontal bars in an SVG named `label` (role img) and described by `description`; each bar
 * carries its value as text, so the chart is read without its colors. A value over `reference`
 * (100% for ratios) runs past a dashed line at it: ratios are not capped.
 */
export function BarChart({
  label,
  description,
  bars,
  reference,
  referenceText,
}: {
  label: string
  description: string
  bars: readonly Bar[]
  /** Where a dashed line goes (1 = 100% for ratios), named by `referenceText`. */
  reference?: number
  referenceText?: string
}) {
  const descriptionId = useId()
  const max = Math.max(reference ?? 0, ...bars.map((b) => b.value ?? 0), Number.EPSILON)
  const plot = WIDTH - LABEL_W - VALUE_W
  const x = (v: number) => LABEL_W + (plot * Math.max(0, v)) / max
  const top = reference !== undefined ? 14 : 0
  const height = top + Math.max(1, bars.length) * ROW + 8
  return (
    <figure className="chart bar-chart">
      <svg role="img" aria-label={label} aria-describedby={descriptionId} viewBox={`0 0 ${WIDTH} ${height}`} width="100%" style={{ maxWidth: WIDTH }} preserveAspectRatio="xMinYMin meet">
        {bars.map((b, i) => {
          const y = top + 4 + i * ROW
          return (
            <g key={b.key}>
              <text x={LABEL_W - 6} y={y + ROW / 2} textAnchor="end" dominantBaseline="middle" className="bar-label">
                {b.label.length > 24 ? `${b.label.slice(0, 23)}…` : b.label}
              </text>
              {b.value !== null ? <rect x={LABEL_W} y={y + 3} width={Math.max(1, x(b.value) - LABEL_W)} height={ROW - 6} className="bar" /> : null}
              <text x={(b.value !== null ? x(b.value) : LABEL_W) + 6} y={y + ROW / 2} dominantBaseline="middle" className="bar-value">
                {b.text}
              </text>
            </g>
          )
        })}
        {reference !== undefined ? (
          <>
            <line x1={x(reference)} x2={x(reference)} y1={top} y2={height} className="reference" />
            <text x={x(reference)} y={10} textAnchor="middle" className="tick">
              {referenceText}
            </text>
          </>
        ) : null}
      </svg>
      <figcaption id={descriptionId}>{description}</figcaption>
    </figure>
  )
}
