import { sessionStore } from '../session/session'
import { ApiError } from './api-error'

export interface RequestOptions {
  method?: string
  /** JSON body. */
  json?: unknown
  /** Multipart body. */
  form?: FormData
  signal?: AbortSignal
}

/** Calls the server with the session's Bearer token; a 401 on an authenticated call signs out. */
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
  if (!response.ok) {
    if (response.status === 401 && session && sessionStore.getSnapshot()?.token === session.token && !path.includes('/auth/')) sessionStore.signOut()
    // A proxied device error carries the device's own {error, message} in `data`.
    const inner = (typeof data.data === 'object' && data.data !== null ? data.data : {}) as Record<string, unknown>
    const message = data.message ?? inner.message ?? inner.error ?? `${response.status} ${response.statusText}`
    throw new ApiError(response.status, String(data.error ?? inner.error ?? 'error'), String(message), data)
  }
  return data as T
}
