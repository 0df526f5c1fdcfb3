import { useEffect, useRef } from 'react'
import uPlot from 'uplot'
import 'uplot/dist/uPlot.min.css'
import { formatHour, formatNumber, formatShortTime } from '../../../components/ui/format'

export interface TelemetryChartProps {
  /** The canvas's accessible name ("Telemetry"). */
  label: string
  /** Read by screen readers in place of the drawing. */
  description: string
  seriesLabel: string
  /** [ms, value] pairs, oldest first. */
  points: readonly (readonly [number, number])[]
}

const HEIGHT = 260

/** Whether the x scale covers more than a day (ticks then carry the date). */
const spansDays = (u: uPlot) => (u.scales.x?.max ?? 0) - (u.scales.x?.min ?? 0) > 86_400

/** A uPlot line chart on a <canvas role="img"> named by `label` (loaded lazily with this module). */
export function TelemetryChart({ label, description, seriesLabel, points }: TelemetryChartProps) {
  const host = useRef<HTMLDivElement>(null)
  const descriptionId = `${label}-chart-description`.replace(/\s+/g, '-')
  // uPlot draws into a DOM node it owns: an external system, so an effect.
  useEffect(() => {
    const target = host.current
    if (!target) return
    const data: uPlot.AlignedData = [points.map((p) => p[0] / 1000), points.map((p) => p[1])]
    const chart = new uPlot(
      {
        width: Math.max(320, target.clientWidth),
        height: HEIGHT,
        legend: { show: false },
        cursor: { show: true },
        scales: { x: { time: true } },
        series: [{}, { label: seriesLabel, stroke: '#0b5cad', width: 2, points: { show: points.length < 60 } }],
        // Ticks in the browser's locale and zone (§12), not uPlot's English names.
        axes: [
          { stroke: '#4a5360', values: (u, splits) => splits.map((s) => (spansDays(u) ? formatShortTime(s * 1000) : formatHour(s * 1000))) },
          { stroke: '#4a5360', size: 80, values: (_u, splits) => splits.map((v) => formatNumber(v)) },
        ],
      },
      data,
      target,
    )
    const canvas = chart.ctx.canvas
    canvas.setAttribute('role', 'img')
    canvas.setAttribute('aria-label', label)
    canvas.setAttribute('aria-describedby', descriptionId)
    const resize = new ResizeObserver(() => chart.setSize({ width: Math.max(320, target.clientWidth), height: HEIGHT }))
    resize.observe(target)
    return () => {
      resize.disconnect()
      chart.destroy()
    }
  }, [points, label, seriesLabel, descriptionId])
  return (
    <figure className="chart">
      <div ref={host} />
      <figcaption id={descriptionId}>{description}</figcaption>
    </figure>
  )
}
