import { Counter, Histogram, Registry, type OpenMetricsContentType, type RegistryContentType } from 'prom-client'
import { describe, expect, it } from 'vitest'
import { LeanCounter, LeanHistogram, REJECTED_OBSERVATIONS } from '../../src/metrics/lean-metrics.js'

const BUCKETS = [0.001, 0.005, 0.01, 0.1, 1]
const OBSERVED = [0.0004, 0.001, 0.003, 0.02, 0.02, 0.5, 3, 0.0099]
const FORMATS = [
  { format: 'Prometheus text', contentType: Registry.PROMETHEUS_CONTENT_TYPE },
  { format: 'OpenMetrics', contentType: Registry.OPENMETRICS_CONTENT_TYPE },
] as const
const DEFAULT_LABELS = [
  { defaults: 'no default labels', labels: undefined },
  // `route` is also a label of the metrics: a series' own value wins.
  { defaults: 'default labels', labels: { instance: 'gw-1', route: 'from-defaults' } },
] as const

/** A registry of either text format: prom-client types the content type into the registry. */
function registry(contentType: RegistryContentType = Registry.PROMETHEUS_CONTENT_TYPE, defaultLabels?: object): Registry<OpenMetricsContentType> {
  const made = new Registry<OpenMetricsContentType>()
  if (contentType === Registry.OPENMETRICS_CONTENT_TYPE) made.setContentType(contentType)
  if (defaultLabels) made.setDefaultLabels(defaultLabels)
  return made
}

/** A registry's text without the rejected-observations counter that lean metrics add, to compare it with prom-client's. */
async function text(registry: Registry<RegistryContentType>): Promise<string> {
  registry.removeSingleMetric(REJECTED_OBSERVATIONS)
  return registry.metrics()
}

describe('lean metrics', () => {
  for (const { format, contentType } of FORMATS) {
    for (const { defaults, labels: defaultLabels } of DEFAULT_LABELS) {
      it(`expose counters and histograms exactly as prom-client does (${format}, ${defaults})`, async () => {
        const [lean, reference] = [registry(contentType, defaultLabels), registry(contentType, defaultLabels)]
        const histogram = { name: 'x_seconds', help: 'h', labelNames: ['route', 'outcome'], buckets: BUCKETS } as const
        const counter = { name: 'y_total', help: 'h', labelNames: ['method', 'route', 'status_code'] } as const
        const mine = {
          histogram: new LeanHistogram({ ...histogram, registers: [lean] }),
          counter: new LeanCounter({ ...counter, registers: [lean] }),
          bare: new LeanCounter({ name: 'z_total', help: 'no labels', labelNames: [], registers: [lean] }),
          bareHistogram: new LeanHistogram({ name: 'w_bytes', help: 'no labels', labelNames: [], buckets: [10, 100], registers: [lean] }),
        }
        const theirs = {
          histogram: new Histogram({ ...histogram, buckets: [...BUCKETS], registers: [reference] }),
          counter: new Counter({ ...counter, registers: [reference] }),
          bare: new Counter({ name: 'z_total', help: 'no labels', registers: [reference] }),
          bareHistogram: new Histogram({ name: 'w_bytes', help: 'no labels', buckets: [10, 100], registers: [reference] }),
        }
        for (const [i, value] of OBSERVED.entries()) {
          const labels = { route: i % 2 === 0 ? '/a/:id' : '/b', outcome: 'answered' }
          mine.histogram.labels(labels).observe(value)
          theirs.histogram.observe(labels, value)
        }
        for (const [method, status] of [['GET', 200], ['GET', 200], ['POST', 404], ['GET', 500]] as const) {
          mine.counter.labels({ method, route: '/b', status_code: status }).inc()
          theirs.counter.inc({ method, route: '/b', status_code: status })
        }
        mine.bareHistogram.observe(50)
        theirs.bareHistogram.observe(50)
        expect(await text(lean)).toBe(await reference.metrics())
        expect(lean.contentType).toBe(contentType)
      })
    }
  }

  it('give the same child for the same label set, and escape label values like prom-client', async () => {
    const registry = new Registry()
    const counter = new LeanCounter({ name: 'z_total', help: 'h', labelNames: ['route'], registers: [registry] })
    expect(counter.labels({ route: '/a' })).toBe(counter.labels({ route: '/a' }))
    counter.labels({ route: 'say "hi"\\n' }).inc(2)
    expect(await registry.metrics()).toContain('z_total{route="say \\"hi\\"\\\\n"} 2')
  })

  it('answer prom-client’s own calls (label set per call, positional labels, timers, zero, remove) as prom-client does', async () => {
    const [lean, reference] = [new Registry(), new Registry()]
    const histogram = { name: 'x_seconds', help: 'h', labelNames: ['route', 'outcome'], buckets: BUCKETS } as const
    const counter = { name: 'y_total', help: 'h', labelNames: ['method', 'status_code'] } as const
    const mine = { histogram: new LeanHistogram({ ...histogram, registers: [lean] }), counter: new LeanCounter({ ...counter, registers: [lean] }) }
    const theirs = { histogram: new Histogram({ ...histogram, buckets: [...BUCKETS], registers: [reference] }), counter: new Counter({ ...counter, registers: [reference] }) }
    for (const metrics of [mine, theirs]) {
      metrics.histogram.observe({ route: '/a', outcome: 'answered' }, 0.003)
      metrics.histogram.observe({ route: '/a', outcome: 'answered' }, 0.5)
      metrics.histogram.labels('/b', 'timeout').observe(2)
      metrics.histogram.zero({ route: '/c', outcome: 'answered' })
      metrics.histogram.labels('/gone', 'answered').observe(1)
      metrics.histogram.remove('/gone', 'answered')
      metrics.counter.inc({ method: 'GET', status_code: 200 }, 3)
      metrics.counter.labels('POST', '201').inc()
      metrics.counter.inc({ method: 'PUT', status_code: 204 })
      metrics.counter.remove({ method: 'PUT', status_code: 204 })
    }
    expect(await text(lean)).toBe(await reference.metrics())
    expect(lean.getSingleMetric('x_seconds')).toBe(mine.histogram)

    const end = mine.histogram.labels({ route: '/t', outcome: 'answered' }).startTimer()
    expect(end()).toBeGreaterThanOrEqual(0)
    mine.histogram.startTimer({ route: '/t' })({ outcome: 'late' })
    // The exemplar form of the typings (prom-client takes it only with exemplars enabled); exemplars are not kept.
    mine.histogram.observe({ labels: { route: '/t', outcome: 'late' }, value: 0.5 })
    const exposed = await lean.metrics()
    expect(exposed).toContain('x_seconds_count{route="/t",outcome="answered"} 1')
    expect(exposed).toContain('x_seconds_count{route="/t",outcome="late"} 2')
    expect(() => mine.counter.labels('GET')).toThrow('Invalid number of arguments')
    expect(() => mine.counter.inc({ method: 'GET', status_code: 200, colour: 'red' } as never)).toThrow('not included in initial labelset')
  })

  it('keep recording through the children callers hold after the registry is reset', async () => {
    const lean = new Registry()
    const histogram = new LeanHistogram({ name: 'x_seconds', help: 'h', labelNames: ['route'], buckets: BUCKETS, registers: [lean] })
    const counter = new LeanCounter({ name: 'y_total', help: 'h', labelNames: ['route'], registers: [lean] })
    const [held, heldCount] = [histogram.labels({ route: '/a' }), counter.labels({ route: '/a' })]
    held.observe(0.5)
    held.observe(3)
    heldCount.inc(7)
    lean.resetMetrics()
    expect(await text(lean)).toContain('x_seconds_count{route="/a"} 0')

    held.observe(0.003)
    heldCount.inc()
    // The same as a prom-client registry that saw only what came after the reset.
    const reference = new Registry()
    new Histogram({ name: 'x_seconds', help: 'h', labelNames: ['route'], buckets: [...BUCKETS], registers: [reference] }).observe({ route: '/a' }, 0.003)
    new Counter({ name: 'y_total', help: 'h', labelNames: ['route'], registers: [reference] }).inc({ route: '/a' })
    const exposed = await text(lean)
    expect(exposed).toContain('x_seconds_sum{route="/a"} 0.003')
    expect(exposed).toContain('y_total{route="/a"} 1')
    expect(exposed).toBe(await reference.metrics())
  })

  it('leave NaN and infinite observations and negative increments out, and count them in an exposed counter', async () => {
    const lean = new Registry()
    const histogram = new LeanHistogram({ name: 'x_seconds', help: 'h', labelNames: ['route'], buckets: BUCKETS, registers: [lean] })
    const counter = new LeanCounter({ name: 'y_total', help: 'h', labelNames: ['route'], registers: [lean] })
    const child = histogram.labels({ route: '/a' })
    for (const value of [NaN, Infinity, -Infinity, 0.02]) child.observe(value)
    for (const by of [NaN, -1, Infinity, 2]) counter.labels({ route: '/a' }).inc(by)

    const exposed = await lean.metrics()
    expect(exposed).toContain('x_seconds_sum{route="/a"} 0.02')
    expect(exposed).toContain('x_seconds_count{route="/a"} 1')
    expect(exposed).toContain('y_total{route="/a"} 2')
    expect(exposed).toContain(`# TYPE ${REJECTED_OBSERVATIONS} counter`)
    expect(exposed).toContain(`${REJECTED_OBSERVATIONS}{metric="x_seconds"} 3`)
    expect(exposed).toContain(`${REJECTED_OBSERVATIONS}{metric="y_total"} 3`)
    // prom-client refuses the same values by throwing, on the request that observed them.
    const theirs = new Histogram({ name: 'x_seconds', help: 'h', buckets: [...BUCKETS], registers: [] })
    for (const value of [NaN, Infinity, -Infinity]) expect(() => theirs.observe(value)).toThrow('Value is not a valid number')
    expect(() => new Counter({ name: 'y_total', help: 'h', registers: [] }).inc(-1)).toThrow('not possible to decrease')
  })

  it('count rejections in every registry that holds the metric, with one counter per registry', async () => {
    const [one, other] = [new Registry(), new Registry()]
    const first = new LeanHistogram({ name: 'x_seconds', help: 'h', labelNames: [], buckets: BUCKETS, registers: [one, other] })
    new LeanCounter({ name: 'y_total', help: 'h', labelNames: [], registers: [one] })
    first.observe(NaN)
    expect(await one.metrics()).toContain(`${REJECTED_OBSERVATIONS}{metric="x_seconds"} 1\n${REJECTED_OBSERVATIONS}{metric="y_total"} 0`)
    expect(await other.metrics()).toContain(`${REJECTED_OBSERVATIONS}{metric="x_seconds"} 1`)
  })
})
