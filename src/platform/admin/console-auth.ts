import type { FastifyRequest } from 'fastify'
import type { AppDeps } from '../../app-deps.js'
import { forbidden, unauthorized } from '../../errors.js'
import { hasConsoleToken } from '../device-api/device-auth.js'

/**
 * The admin API's guard, run by the `/api/admin/` onRequest hook before any body is read (contract §8): the console token, or a gateway token of an
 * administrator. Neither → 401; a valid token of another role → 403.
 */
export function requireConsole(deps: AppDeps) {
  return async (request: FastifyRequest): Promise<void> => {
    if (hasConsoleToken(request)) return
    const user = await deps.authenticator.identify(request)
    if (!user) throw unauthorized('X-Console-Token or an administrator token required')
    if (user.role !== 'admin') throw forbidden('Administrator rights required')
    request.user = user
  }
}

/** Who an admin write is recorded under: the administrator's username, or `console`. */
export const actorOf = (request: FastifyRequest): string => request.user?.username ?? 'console'
