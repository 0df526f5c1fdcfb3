import { sessionStore } from '../session/session'
import { apiErrorOf } from './api'

export interface RequestOptions {
  method?: string
  /** JSON body. */
  json?: unknown
  /** Multipart body. */
  form?: FormData
  signal?: AbortSignal
}

/**
 * Calls the server with the session's Bearer token; a 401 on an authenticated call signs out.
 * The untyped predecessor of `api` (api.ts), still used by the machine, orders and firmware features.
 */
export async function apiFetch<T>(path: string, options: RequestOptions = {}): Promise<T> {
  const session = sessionStore.getSnapshot()
  const headers: Record<string, string> = { accept: 'application/json' }
  if (session) headers.authorization = `Bearer ${session.token}`
  let body: BodyInit | undefined
  if (options.json !== undefined) {
    headers['content-type'] = 'application/json'
    body = JSON.stringify(options.json)
  } else if (options.form) {
    body = options.form
  }
  const response = await fetch(path, { method: options.method ?? (body ? 'POST' : 'GET'), headers, body, signal: options.signal })
  const text = await response.text()
  let data: Record<string, unknown> = {}
  try {
    data = text ? (JSON.parse(text) as Record<string, unknown>) : {}
  } catch {
    data = { message: text }
  }
  if (!response.ok) throw apiErrorOf(response, data, session?.token, path)
  return data as T
}
