import type { FastifyInstance } from 'fastify'
import { errorBody, RETRY_AFTER_SECONDS } from '../errors.js'
import type { Metrics } from '../metrics/metrics.js'
import { withTimeout } from '../lib/time.js'
import type { ShutdownDrain } from './shutdown-drain.js'

export interface ReadinessCheck {
  name: string
  check(): Promise<void>
}

/** /healthz, /readyz and /metrics: no credentials (contract §1). */
export async function opsRoutes(
  app: FastifyInstance,
  { metrics, readiness, instanceId, drain }: { metrics: Metrics; readiness: ReadinessCheck[]; instanceId: string; drain?: ShutdownDrain },
) {
  const tags = ['ops']
  app.get('/healthz', { schema: { tags } }, async () => ({ success: true, status: 'ok' }))

  app.get('/readyz', { schema: { tags } }, async (request, reply) => {
    // Stopping (SIGTERM): not ready from the first moment, so the load balancer takes it out.
    if (drain?.readinessAsked(request)) {
      reply.header('retry-after', String(RETRY_AFTER_SECONDS.service_unavailable))
      return reply.status(503).send(errorBody('service_unavailable', 'Not ready: this instance is stopping', { status: 'draining', instance: instanceId }))
    }
    const failed: string[] = []
    await Promise.all(
      readiness.map(async (r) => {
        try {
          await withTimeout(r.check(), 2000)
        } catch {
          failed.push(r.name)
        }
      }),
    )
    if (failed.length > 0) {
      reply.header('retry-after', String(RETRY_AFTER_SECONDS.service_unavailable))
      return reply.status(503).send(errorBody('service_unavailable', `Not ready: ${failed.join(', ')} unreachable`, { failed, instance: instanceId }))
    }
    return { success: true, status: 'ready', instance: instanceId }
  })

  app.get('/metrics', { schema: { tags } }, async (_request, reply) => {
    reply.header('content-type', metrics.registry.contentType)
    return metrics.registry.metrics()
  })
}

