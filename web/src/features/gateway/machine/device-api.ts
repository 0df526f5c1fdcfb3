import { apiFetch, type RequestOptions } from '../../../api/api-client'
import type { Envelope } from '../../../api/types'

/** URL of a forwarded device endpoint: /api/v1/devices/{id}{path}. */
export const devicePath = (id: string, path: string) => `/api/v1/devices/${encodeURIComponent(id)}${path}`

/** A forwarded call answered with the proxied envelope; returns its `data`. */
export async function deviceCall<T>(id: string, path: string, options?: RequestOptions): Promise<T> {
  return (await apiFetch<Envelope<T>>(devicePath(id, path), options)).data
}
