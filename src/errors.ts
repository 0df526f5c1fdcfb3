/**
 * Every error code the server answers (contract §2), with its status: the one table. Route
 * handlers throw `AppError`; the HTTP error handler turns it into `{success:false, error, message, ...extra}`.
 * The device link's in-flight limit (64 per device) answers `server_busy`: the contract has no `device_busy`.
 * A dependency outage (PostgreSQL or NATS unreachable) answers `service_unavailable`, never `internal`.
 */
export const ERROR_STATUS = {
  bad_request: 400,
  invalid_code: 400,
  invalid_selector: 400,
  unauthorized: 401,
  device_auth_failed: 401,
  forbidden: 403,
  not_found: 404,
  unknown_device: 404,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  range_not_satisfiable: 416,
  invalid_firmware: 422,
  rate_limited: 429,
  internal: 500,
  device_error: 502,
  device_unavailable: 502,
  bad_device_response: 502,
  upstream_unavailable: 502,
  not_configured: 503,
  server_busy: 503,
  service_unavailable: 503,
  device_timeout: 504,
} as const satisfies Record<string, number>

export type ErrorCode = keyof typeof ERROR_STATUS

/**
 * `Retry-After` for codes that promise one, when the error does not carry its own `retry_after`.
 * `service_unavailable` (the database or NATS cannot be reached): an instance recovers within
 * about a second of its dependency's return, so a client retrying every 2 s costs little.
 */
export const RETRY_AFTER_SECONDS: Partial<Record<ErrorCode, number>> = { server_busy: 1, service_unavailable: 2 }

export const ERROR_CODES = Object.keys(ERROR_STATUS) as ErrorCode[]

export const isErrorCode = (value: unknown): value is ErrorCode => typeof value === 'string' && Object.hasOwn(ERROR_STATUS, value)

export class AppError extends Error {
  readonly code: ErrorCode
  readonly statusCode: number
  readonly extra: Readonly<Record<string, unknown>>

  /**
   * `statusCode` overrides the code's status from the table, for answers that pass a device's
   * own status through (`device_error`, `device_auth_failed`).
   */
  constructor(code: ErrorCode, message: string, extra: Record<string, unknown> = {}, statusCode: number = ERROR_STATUS[code]) {
    super(message)
    this.name = 'AppError'
    this.code = code
    this.statusCode = statusCode
    this.extra = extra
  }
}

export const badRequest = (message: string, extra?: Record<string, unknown>) => new AppError('bad_request', message, extra)
export const notFound = (message = 'Not found', extra?: Record<string, unknown>) => new AppError('not_found', message, extra)
export const unauthorized = (message = 'Authentication required') => new AppError('unauthorized', message)
export const forbidden = (message = 'Forbidden') => new AppError('forbidden', message)
export const conflict = (message: string, extra?: Record<string, unknown>) => new AppError('conflict', message, extra)

export function errorBody(code: ErrorCode, message: string, extra: Record<string, unknown> = {}) {
  return { success: false as const, error: code, message, ...extra }
}
