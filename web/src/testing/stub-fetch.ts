import { vi } from 'vitest'

export interface RecordedRequest {
  method: string
  url: string
  body: unknown
}

const pathOf = (url: string) => {
  const parsed = new URL(url, 'http://localhost')
  return parsed.pathname + parsed.search
}

/** Replaces the network (global fetch) with `answer`; returns the requests the page made. */
export function stubFetch(answer: (request: RecordedRequest) => { status: number; body: unknown }): RecordedRequest[] {
  const requests: RecordedRequest[] = []
  vi.stubGlobal('fetch', async (input: string | Request, init: RequestInit = {}) => {
    // apiFetch calls fetch(path, init); the typed client (api/api.ts) calls fetch(Request).
    const request =
      input instanceof Request
        ? { method: input.method, url: pathOf(input.url), body: await input.text().then((text) => (text ? (JSON.parse(text) as unknown) : undefined)) }
        : { method: init.method ?? 'GET', url: String(input), body: typeof init.body === 'string' ? (JSON.parse(init.body) as unknown) : undefined }
    requests.push(request)
    const { status, body } = answer(request)
    return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } })
  })
  return requests
}
