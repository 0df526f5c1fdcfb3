import type { FastifyInstance, FastifyRequest } from 'fastify'

export interface PrefixGuard {
  /** Route patterns starting with this (e.g. `/api/admin/`) are guarded. */
  prefix: string
  /** Throws the 401/403 `AppError`; may set `request.user`. */
  check: (request: FastifyRequest) => Promise<void>
}

/**
 * One onRequest hook for every guarded surface: credentials are checked before any body is
 * read or parsed, so an anonymous upload is refused without being read. Matched against the
 * route's pattern, not the raw URL, so no spelling of a path slips past its guard.
 */
export function installPrefixGuards(app: FastifyInstance, guards: PrefixGuard[]): void {
  app.addHook('onRequest', async (request) => {
    const pattern = request.routeOptions.url
    if (pattern === undefined) return
    for (const guard of guards) if (pattern.startsWith(guard.prefix)) return guard.check(request)
  })
}
