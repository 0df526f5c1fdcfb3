import { vi } from 'vitest'

export interface RecordedRequest {
  method: string
  url: string
  body: unknown
}

/** Replaces the network (global fetch) with `answer`; returns the requests the page made. */
export function stubFetch(answer: (request: RecordedRequest) => { status: number; body: unknown }): RecordedRequest[] {
  const requests: RecordedRequest[] = []
  vi.stubGlobal('fetch', async (url: string, init: RequestInit = {}) => {
    const request = { method: init.method ?? 'GET', url: String(url), body: typeof init.body === 'string' ? (JSON.parse(init.body) as unknown) : undefined }
    requests.push(request)
    const { status, body } = answer(request)
    return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } })
  })
  return requests
}
