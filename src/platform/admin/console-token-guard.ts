import type { FastifyReply, FastifyRequest } from 'fastify'
import { clientAddressKey } from '../../auth/client-address.js'
import { LoginThrottle } from '../../auth/login-throttle.js'
import { sameSecret } from '../../auth/secrets.js'
import type { Storage } from '../../storage/storage.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The request carries the right X-Console-Token (set by `ConsoleTokenGuard.hook`). */
    consoleAuthenticated: boolean
  }
}

export const CONSOLE_TOKEN_HEADER = 'x-console-token'
/** Wrong console tokens per client address (an IPv6 /64) within the window; past them every console-token request from there gets 429. */
export const CONSOLE_TOKEN_FAILURES = 10
export const CONSOLE_TOKEN_WINDOW_MS = 15 * 60_000

const TOO_MANY = 'Too many wrong console tokens from this address; try again later'

/**
 * Checks `X-Console-Token` once per request, before any route's own checks, wherever the console
 * token is accepted (admin API, binding for a user, acting as a device). Wrong tokens are counted
 * per client address in the database (`login_counters`, scope `console-token`: every instance
 * counts the same rows); after `CONSOLE_TOKEN_FAILURES` within `CONSOLE_TOKEN_WINDOW_MS` every
 * request from that address presenting a console token is answered 429 `rate_limited` with
 * `Retry-After`, the right token included, until the window ends: the token is not even compared,
 * so a limited client learns nothing. Right tokens count nothing and write nothing; each request
 * presenting a token reads its address's counter once (by primary key), and only a wrong token
 * writes (at most `CONSOLE_TOKEN_FAILURES` writes per address and window). The comparison is in
 * constant time (`sameSecret`). Requests without the header pay nothing.
 */
export class ConsoleTokenGuard {
  private readonly failures: LoginThrottle

  constructor(
    storage: Pick<Storage, 'db' | 'clock'>,
    private readonly consoleToken: string,
  ) {
    this.failures = new LoginThrottle(storage, 'console-token', CONSOLE_TOKEN_FAILURES, CONSOLE_TOKEN_WINDOW_MS)
  }

  /** App-wide onRequest hook: sets `request.consoleAuthenticated`; 429 while the address is limited. */
  readonly hook = async (request: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    const presented = request.headers[CONSOLE_TOKEN_HEADER]
    if (presented === undefined) return
    const key = clientAddressKey(request.ip)
    await this.failures.refuseWhileLimited(key, TOO_MANY)
    if (typeof presented === 'string' && sameSecret(presented, this.consoleToken)) {
      request.consoleAuthenticated = true
      return
    }
    // Wrong: counted. The route then answers as it would without the token (401, or another credential).
    await this.failures.claim(key, TOO_MANY)
  }
}
