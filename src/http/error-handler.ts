import type { FastifyError, FastifyInstance } from 'fastify'
import { AppError, errorBody, RETRY_AFTER_SECONDS, type ErrorCode } from '../errors.js'

/** Fastify's own error codes that are the client's fault, mapped to the contract's codes. */
const FASTIFY_CODES: Record<string, [number, ErrorCode]> = {
  FST_ERR_CTP_BODY_TOO_LARGE: [413, 'payload_too_large'],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: [415, 'unsupported_media_type'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: [400, 'bad_request'],
  FST_ERR_CTP_EMPTY_JSON_BODY: [400, 'bad_request'],
  FST_ERR_CTP_INVALID_JSON_BODY: [400, 'bad_request'],
  FST_ERR_BAD_URL: [400, 'bad_request'],
  FST_INVALID_MULTIPART_CONTENT_TYPE: [415, 'unsupported_media_type'],
  FST_REQ_FILE_TOO_LARGE: [413, 'payload_too_large'],
  FST_PARTS_LIMIT: [413, 'payload_too_large'],
  FST_FILES_LIMIT: [413, 'payload_too_large'],
  FST_FIELDS_LIMIT: [413, 'payload_too_large'],
}

const STATUS_CODES: Record<number, ErrorCode> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'not_found',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
}

const causeOf = (error: AppError) => (error.cause instanceof Error ? { cause: error.cause.message || String((error.cause as { code?: unknown }).code) } : {})

/** One error body everywhere: `{success:false, error, message, ...}`. */
export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | AppError, request, reply) => {
    if (error instanceof AppError) {
      // Operational errors (device gone, busy, silent) are logged by code: their stack trace is
      // always the same, and formatting it for every 503 of an overloaded device made overload worse.
      // A dependency outage names its cause (connect ECONNREFUSED …) for the operator, not for the client.
      if (error.statusCode >= 500) request.log.error({ code: error.code, status: error.statusCode, url: request.url, reqId: request.id, ...causeOf(error) }, error.message)
      const retryAfter = typeof error.extra.retry_after === 'number' ? error.extra.retry_after : RETRY_AFTER_SECONDS[error.code]
      if (retryAfter !== undefined) reply.header('retry-after', String(retryAfter))
      return reply.status(error.statusCode).send(errorBody(error.code, error.message, error.extra))
    }
    const fe = error as FastifyError
    if (fe.validation) {
      const where = fe.validationContext ?? 'request'
      return reply.status(400).send(errorBody('bad_request', `Invalid ${where}: ${fe.message}`))
    }
    const mapped = fe.code ? FASTIFY_CODES[fe.code] : undefined
    if (mapped) return reply.status(mapped[0]).send(errorBody(mapped[1], fe.message))
    const status = fe.statusCode ?? 500
    if (status >= 400 && status < 500 && STATUS_CODES[status]) {
      return reply.status(status).send(errorBody(STATUS_CODES[status]!, fe.message))
    }
    request.log.error({ err: error, reqId: request.id }, 'unhandled error')
    return reply.status(500).send(errorBody('internal', 'Internal server error', { request_id: request.id }))
  })

  app.setNotFoundHandler((request, reply) => {
    reply.status(404).send(errorBody('not_found', `No route ${request.method} ${request.url.split('?')[0]}`))
  })
}
