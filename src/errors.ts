/**
 * Every error code of the contract (§2), one table. Route handlers throw `AppError`;
 * the HTTP error handler turns it into `{success:false, error, message, ...extra}`.
 */
export const ERROR_STATUS = {
  bad_request: 400,
  invalid_code: 400,
  unauthorized: 401,
  device_auth_failed: 401,
  forbidden: 403,
  not_found: 404,
  unknown_device: 404,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  invalid_firmware: 422,
  rate_limited: 429,
  internal: 500,
  device_unavailable: 502,
  bad_device_response: 502,
  upstream_unavailable: 502,
  device_busy: 503,
  not_configured: 503,
  server_busy: 503,
  device_timeout: 504,
} as const

export type ErrorCode = keyof typeof ERROR_STATUS

export class AppError extends Error {
  readonly code: ErrorCode | string
  readonly statusCode: number
  readonly extra: Record<string, unknown>

  constructor(code: ErrorCode, message: string, extra: Record<string, unknown> = {}, statusCode?: number) {
    super(message)
    this.name = 'AppError'
    this.code = code
    this.statusCode = statusCode ?? ERROR_STATUS[code]
    this.extra = extra
  }
}

/** An error whose HTTP status is not its code's default (e.g. a device's 403 passed through). */
export function errorWithStatus(code: string, statusCode: number, message: string, extra: Record<string, unknown> = {}): AppError {
  const err = new AppError('bad_request', message, extra, statusCode)
  ;(err as { code: string }).code = code
  return err
}

export const badRequest = (message: string, extra?: Record<string, unknown>) => new AppError('bad_request', message, extra)
export const notFound = (message = 'Not found', extra?: Record<string, unknown>) => new AppError('not_found', message, extra)
export const unauthorized = (message = 'Authentication required') => new AppError('unauthorized', message)
export const forbidden = (message = 'Forbidden') => new AppError('forbidden', message)
export const conflict = (message: string, extra?: Record<string, unknown>) => new AppError('conflict', message, extra)

/** Error codes mapped to WebSocket close codes for the device link, and to CLI exit codes. */
export const CLOSE_CODES = {
  normal: 1000,
  restarting: 1012,
  too_big: 1009,
  bad_frame: 4400,
  unauthorized: 4401,
  register_timeout: 4408,
  replaced: 4409,
} as const

export function errorBody(code: string, message: string, extra: Record<string, unknown> = {}) {
  return { success: false as const, error: code, message, ...extra }
}
