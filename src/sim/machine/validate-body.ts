import type { Static, TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { RouteError } from '@fleetgate/device-agent'

/** The body checked against its schema; a 400 naming the first bad field otherwise. A missing body counts as `{}`. */
export function parseBody<T extends TSchema>(schema: T, body: unknown): Static<T> {
  const value = body ?? {}
  if (Value.Check(schema, value)) return value as Static<T>
  const first = Value.Errors(schema, value).First()
  const field = first?.path ? first.path.slice(1).replace(/\//g, '.') : 'body'
  throw new RouteError(400, 'bad_request', `${field || 'body'}: ${first?.message ?? 'invalid'}`)
}

export const conflict = (code: string, message: string, extra?: Record<string, unknown>) => new RouteError(409, code, message, extra)
export const notFound = (what: string, id: string) => new RouteError(404, 'not_found', `${what} ${id} not found`)
export const badRequest = (code: string, message: string) => new RouteError(400, code, message)

/** The first value of a query parameter. */
export const queryValue = (query: Record<string, string | string[]>, key: string): string | undefined => {
  const value = query[key]
  return Array.isArray(value) ? value[0] : value
}
