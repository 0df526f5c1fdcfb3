/**
 * WebSocket close codes of the device link (contract §4): the one table the gateway closes
 * with and the device agent reads.
 */
export const CLOSE_CODES = {
  normal: 1000,
  too_big: 1009,
  internal: 1011,
  restarting: 1012,
  /** Try again later: too many sockets await registration, or a claim could not be announced. */
  try_again: 1013,
  bad_frame: 4400,
  unauthorized: 4401,
  register_timeout: 4408,
  replaced: 4409,
} as const

export type CloseCode = (typeof CLOSE_CODES)[keyof typeof CLOSE_CODES]

/** Close codes that mean "do not come back" (contract §4): the agent stops instead of re-linking. */
export const FATAL_CLOSE_CODES = { [CLOSE_CODES.unauthorized]: 'unauthorized', [CLOSE_CODES.replaced]: 'replaced' } as const
export type FatalReason = (typeof FATAL_CLOSE_CODES)[keyof typeof FATAL_CLOSE_CODES]
