import createClient from 'openapi-fetch'
import { sessionStore } from '../session/session'
import { ApiError } from './api-error'
import type { paths } from './openapi'

/**
 * The typed client of the server's API: paths, parameters, bodies and answers all come from
 * `openapi.d.ts`, generated from the server's own /openapi.json (`npm run gen:api`), so a call
 * the server no longer answers, or a field it no longer sends, fails to compile.
 * `fetch` is looked up at each call (tests stub it).
 */
export const api = createClient<paths>({ fetch: (request) => globalThis.fetch(request) })

api.use({
  onRequest({ request }) {
    const session = sessionStore.getSnapshot()
    if (session && !request.headers.has('authorization')) request.headers.set('authorization', `Bearer ${session.token}`)
    request.headers.set('accept', 'application/json')
    return request
  },
})

/** A contract error body (§2), or a proxied device error carrying the device's own `{error, message}` in `data`. */
export function apiErrorOf(response: Response, body: unknown, sentToken: string | undefined, path = new URL(response.url || '/', 'http://x').pathname): ApiError {
  const data = (typeof body === 'object' && body !== null ? body : typeof body === 'string' && body ? { message: body } : {}) as Record<string, unknown>
  if (response.status === 401 && sentToken && sessionStore.getSnapshot()?.token === sentToken && !path.includes('/auth/')) sessionStore.signOut()
  const inner = (typeof data.data === 'object' && data.data !== null ? data.data : {}) as Record<string, unknown>
  const message = data.message ?? inner.message ?? inner.error ?? `${response.status} ${response.statusText}`
  return new ApiError(response.status, String(data.error ?? inner.error ?? 'error'), String(message), data)
}

/**
 * The answer of a typed call, or its error thrown as ApiError (so queries and mutations fail):
 * `const list = await ok(api.GET('/api/v1/devices', { params: { query: { limit: 100 } } }))`.
 */
export async function ok<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const sentToken = sessionStore.getSnapshot()?.token
  const { data, error, response } = await call
  if (!response.ok || data === undefined) throw apiErrorOf(response, error, sentToken)
  return data
}
