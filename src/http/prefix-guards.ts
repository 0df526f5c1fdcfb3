import type { FastifyInstance, FastifyRequest, onRequestHookHandler, RouteOptions } from 'fastify'

export interface PrefixGuard {
  /** Route patterns starting with this (e.g. `/api/admin/`) are guarded. */
  prefix: string
  /** Throws the 401/403 `AppError`; may set `request.user`. */
  check: (request: FastifyRequest) => Promise<void>
}

/**
 * Every route under a guarded prefix gets the guard as its first onRequest hook: credentials are
 * checked before any body is read or parsed, so an anonymous upload is refused without being
 * read. Matched against the route's pattern when the route is declared, not against the raw
 * URL, so no spelling of a path slips past its guard, and other routes pay nothing for it.
 */
export function installPrefixGuards(app: FastifyInstance, guards: PrefixGuard[]): void {
  app.addHook('onRoute', (route: RouteOptions) => {
    const guard = guards.find((g) => route.url.startsWith(g.prefix))
    if (!guard) return
    const own = route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest]
    route.onRequest = [guard.check as onRequestHookHandler, ...own]
  })
}
