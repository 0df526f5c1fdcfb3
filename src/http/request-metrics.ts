import type { FastifyInstance, FastifyReply, FastifyRequest, onResponseHookHandler, RouteOptions } from 'fastify'
import { LeanCounter, LeanHistogram, type LeanCounterChild, type LeanHistogramChild } from '../metrics/lean-metrics.js'
import type { Metrics } from '../metrics/metrics.js'

export function installRequestMetrics(app: FastifyInstance, { registry }: Metrics): void {
  const requests = new LeanCounter({
    name: 'fleetgate_http_requests_total',
    help: 'HTTP requests by method, route and status code',
    labelNames: ['method', 'route', 'status_code'],
    registers: [registry],
  })
  const duration = new LeanHistogram({
    name: 'fleetgate_http_request_duration_seconds',
    help: 'HTTP request latency by method and route',
    labelNames: ['method', 'route'],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  })
  // The route pattern, never the raw URL: ids would explode the label set. Each route's hook
  // knows its pattern and keeps its metric children, so a request looks up no label set.
  const recorder = (route: string) => {
    const byMethod = new Map<string, { duration: LeanHistogramChild; byStatus: Map<number, LeanCounterChild> }>()
    return (request: FastifyRequest, reply: FastifyReply) => {
      const { method } = request
      const status = reply.statusCode
      let known = byMethod.get(method)
      if (!known) byMethod.set(method, (known = { duration: duration.labels({ method, route }), byStatus: new Map() }))
      let counter = known.byStatus.get(status)
      if (!counter) known.byStatus.set(status, (counter = requests.labels({ method, route, status_code: status })))
      counter.inc()
      known.duration.observe(reply.elapsedTime / 1000)
    }
  }
  app.addHook('onRoute', (route: RouteOptions) => {
    const record = recorder(route.url)
    const own = route.onResponse === undefined ? [] : Array.isArray(route.onResponse) ? route.onResponse : [route.onResponse]
    const hook: onResponseHookHandler = (request, reply, done) => {
      record(request, reply)
      done()
    }
    route.onResponse = [...own, hook]
  })
  const unmatched = recorder('unmatched')
  app.addHook('onResponse', (request, reply, done) => {
    if (request.is404) unmatched(request, reply)
    done()
  })
}
