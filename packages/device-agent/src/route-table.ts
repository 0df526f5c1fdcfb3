import type { HttpMethod, RequestQuery, RequestUser } from './protocol/frames.js'

/** What a handler receives for one forwarded request. */
export interface RouteRequest {
  method: HttpMethod
  path: string
  params: Record<string, string>
  query: RequestQuery
  body: unknown
  user: RequestUser
}

/** What a handler answers: becomes the `status` and `data` of the response frame. */
export interface RouteResult {
  status: number
  data: unknown
}

export type RouteHandler = (request: RouteRequest) => RouteResult | Promise<RouteResult>

/**
 * Thrown by a handler to answer with a status other than 500, e.g.
 * `throw new RouteError(400, 'out_of_range', 'x 450 outside 0–400 mm')` → `{status: 400, data: {error, message}}`.
 */
export class RouteError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message)
    this.name = 'RouteError'
  }

  toResult(): RouteResult {
    return { status: this.status, data: { error: this.code, message: this.message, ...this.extra } }
  }
}

export const ok = (data: unknown): RouteResult => ({ status: 200, data })
export const created = (data: unknown): RouteResult => ({ status: 201, data })

interface Route {
  method: HttpMethod
  pattern: string
  segments: string[]
  handler: RouteHandler
}

export type RouteMatch =
  | { kind: 'found'; handler: RouteHandler; params: Record<string, string> }
  | { kind: 'method_not_allowed'; allowed: HttpMethod[] }
  | { kind: 'not_found' }

const splitPath = (path: string) => path.split('/').filter((segment) => segment !== '')

/**
 * Handlers keyed by method and path pattern (`/orders/:oid`). Literal segments win over
 * parameters, so `/orders/recent` and `/orders/:oid` can live side by side.
 */
export class RouteTable {
  private readonly routes: Route[] = []
  /** Routes without parameters by their exact path, then method: most requests match without a scan. */
  private readonly literals = new Map<string, Map<string, Route>>()

  add(method: HttpMethod, pattern: string, handler: RouteHandler): this {
    const segments = splitPath(pattern)
    const clash = this.routes.find((r) => r.method === method && r.segments.join('/') === segments.join('/'))
    if (clash) throw new Error(`route ${method} ${pattern} is already defined`)
    const route = { method, pattern, segments, handler }
    this.routes.push(route)
    if (!segments.some((s) => s.startsWith(':') || s.includes('%') || s.includes('?'))) {
      const path = `/${segments.join('/')}`
      const byMethod = this.literals.get(path) ?? new Map<string, Route>()
      this.literals.set(path, byMethod.set(method, route))
    }
    // Most literal first: at the first differing position a literal beats a parameter.
    this.routes.sort((a, b) => specificity(b.segments) - specificity(a.segments))
    return this
  }

  get(pattern: string, handler: RouteHandler) {
    return this.add('GET', pattern, handler)
  }
  post(pattern: string, handler: RouteHandler) {
    return this.add('POST', pattern, handler)
  }
  put(pattern: string, handler: RouteHandler) {
    return this.add('PUT', pattern, handler)
  }
  patch(pattern: string, handler: RouteHandler) {
    return this.add('PATCH', pattern, handler)
  }
  delete(pattern: string, handler: RouteHandler) {
    return this.add('DELETE', pattern, handler)
  }

  /** Every registered route, for listings and tests. */
  list(): { method: HttpMethod; pattern: string }[] {
    return this.routes.map(({ method, pattern }) => ({ method, pattern }))
  }

  match(method: string, path: string): RouteMatch {
    // A literal route matching every segment is the most specific there is. Paths with a query,
    // escapes or empty segments take the general way.
    const literal = this.literals.get(path)?.get(method)
    if (literal) return { kind: 'found', handler: literal.handler, params: {} }
    const rawSegments = splitPath(path.split('?')[0] ?? '')
    let segments: string[]
    try {
      segments = rawSegments.map((s) => decodeURIComponent(s))
    } catch {
      return { kind: 'not_found' }
    }
    const allowed: HttpMethod[] = []
    for (const route of this.routes) {
      const params = matchSegments(route.segments, segments)
      if (!params) continue
      if (route.method === method) return { kind: 'found', handler: route.handler, params }
      allowed.push(route.method)
    }
    return allowed.length > 0 ? { kind: 'method_not_allowed', allowed } : { kind: 'not_found' }
  }

  /** Runs the matching handler; never throws. Unknown path → 404, handler failure → 500. */
  async dispatch(request: Omit<RouteRequest, 'params'>): Promise<RouteResult> {
    const match = this.match(request.method, request.path)
    if (match.kind === 'not_found') return { status: 404, data: { error: 'not_found', message: `no route for ${request.path}` } }
    if (match.kind === 'method_not_allowed') {
      return { status: 405, data: { error: 'method_not_allowed', message: `${request.method} not allowed`, allowed: match.allowed } }
    }
    try {
      const result = await match.handler({ ...request, params: match.params })
      if (!isRouteResult(result)) return { status: 500, data: { error: 'internal', message: 'handler returned no {status, data}' } }
      return { status: result.status, data: result.data === undefined ? null : result.data }
    } catch (err) {
      if (err instanceof RouteError) return err.toResult()
      return { status: 500, data: { error: 'internal', message: err instanceof Error ? err.message : String(err) } }
    }
  }
}

function specificity(segments: string[]): number {
  // Weighted so that an earlier literal outranks any number of later ones.
  return segments.reduce((score, s, i) => score + (s.startsWith(':') ? 0 : 2 ** (16 - i)), segments.length)
}

function matchSegments(pattern: string[], path: string[]): Record<string, string> | undefined {
  if (pattern.length !== path.length) return undefined
  const params: Record<string, string> = {}
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i]!
    const s = path[i]!
    if (p.startsWith(':')) params[p.slice(1)] = s
    else if (p !== s) return undefined
  }
  return params
}

function isRouteResult(value: unknown): value is RouteResult {
  if (typeof value !== 'object' || value === null) return false
  const status = (value as { status?: unknown }).status
  return Number.isInteger(status) && (status as number) >= 100 && (status as number) <= 599
}
