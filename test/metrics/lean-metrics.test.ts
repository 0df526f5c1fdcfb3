import { Counter, Histogram, Registry } from 'prom-client'
import { describe, expect, it } from 'vitest'
import { LeanCounter, LeanHistogram } from '../../src/metrics/lean-metrics.js'

const BUCKETS = [0.001, 0.005, 0.01, 0.1, 1]
const OBSERVED = [0.0004, 0.001, 0.003, 0.02, 0.02, 0.5, 3, 0.0099]

/** Text of one registry with the metric renamed, so two registries' texts compare line by line. */
const text = async (registry: Registry) => (await registry.metrics()).trim()

describe('lean metrics', () => {
  it('expose a histogram exactly as prom-client’s Histogram does for the same observations', async () => {
    const [lean, reference] = [new Registry(), new Registry()]
    const mine = new LeanHistogram({ name: 'x_seconds', help: 'h', labelNames: ['route', 'outcome'], buckets: BUCKETS, registers: [lean] })
    const theirs = new Histogram({ name: 'x_seconds', help: 'h', labelNames: ['route', 'outcome'], buckets: BUCKETS, registers: [reference] })
    for (const [i, value] of OBSERVED.entries()) {
      const labels = { route: i % 2 === 0 ? '/a/:id' : '/b', outcome: 'answered' }
      mine.labels(labels).observe(value)
      theirs.observe(labels, value)
    }
    expect(await text(lean)).toBe(await text(reference))
  })

  it('expose a counter exactly as prom-client’s Counter does', async () => {
    const [lean, reference] = [new Registry(), new Registry()]
    const mine = new LeanCounter({ name: 'y_total', help: 'h', labelNames: ['method', 'status_code'], registers: [lean] })
    const theirs = new Counter({ name: 'y_total', help: 'h', labelNames: ['method', 'status_code'], registers: [reference] })
    for (const [method, status] of [['GET', 200], ['GET', 200], ['POST', 404], ['GET', 500]] as const) {
      mine.labels({ method, status_code: status }).inc()
      theirs.inc({ method, status_code: status })
    }
    expect(await text(lean)).toBe(await text(reference))
  })

  it('gives the same child for the same label set, and escapes label values like prom-client', async () => {
    const registry = new Registry()
    const counter = new LeanCounter({ name: 'z_total', help: 'h', labelNames: ['route'], registers: [registry] })
    expect(counter.labels({ route: '/a' })).toBe(counter.labels({ route: '/a' }))
    counter.labels({ route: 'say "hi"\\n' }).inc(2)
    expect(await text(registry)).toContain('z_total{route="say \\"hi\\"\\\\n"} 2')
  })
})
