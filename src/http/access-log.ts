import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest } from 'fastify'

/** At `info`, one request in this many gets an access line (`sampled` says so); at `debug`, every request. */
export const ACCESS_LOG_SAMPLE = 100

/**
 * At most one access line per request, written when the response is sent. Fastify's default
 * (an "incoming request" and a "request completed" line, ~470 bytes per request) wrote tens of
 * megabytes per minute at proxy rates. At `info` the access log is sampled; server errors are
 * logged by the error handler whatever the sampling, and a failed response write always.
 */
export class AccessLogController extends LogController {
  private count = 0

  constructor(private readonly sampleEvery = ACCESS_LOG_SAMPLE) {
    super()
  }

  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const log = request.log
    if (error) return log.error({ err: error, method: request.method, url: request.url, status: reply.statusCode }, 'response failed')
    const every = enabled(log, 'debug')
    if (!every && (++this.count % this.sampleEvery !== 0 || !enabled(log, 'info'))) return
    const line = { method: request.method, url: request.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime * 100) / 100 }
    if (every) log.debug(line, 'request')
    else log.info({ ...line, sampled: this.sampleEvery }, 'request (sampled)')
  }
}

/** pino loggers answer; Fastify's no-op logger (logging off) has no such method. */
const enabled = (log: FastifyBaseLogger, level: string) => (log as { isLevelEnabled?: (level: string) => boolean }).isLevelEnabled?.(level) === true
