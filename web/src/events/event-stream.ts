import { SseParser, type ServerEvent } from './sse-parser'

export interface EventStreamHandlers {
  onEvent: (event: ServerEvent) => void
  /** Every (re)connection: events in the gap are lost, so live queries must be refetched. */
  onOpen: () => void
  onError?: (error: unknown) => void
  onUnauthorized?: () => void
}

/**
 * GET /api/v1/events read over fetch (EventSource cannot send the Bearer header), reconnecting
 * after the server's `retry:` until stopped. Returns the stop function.
 */
export function openEventStream(token: string, handlers: EventStreamHandlers, url = '/api/v1/events'): () => void {
  const controller = new AbortController()
  let retry = 3000
  const run = async () => {
    while (!controller.signal.aborted) {
      try {
        const response = await fetch(url, {
          headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
          signal: controller.signal,
          cache: 'no-store',
        })
        if (response.status === 401) {
          handlers.onUnauthorized?.()
          return
        }
        if (!response.ok || !response.body) throw new Error(`event stream answered ${response.status}`)
        handlers.onOpen()
        const parser = new SseParser()
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader()
        for (;;) {
          const { value, done } = await reader.read()
          if (done) break
          for (const event of parser.push(value)) handlers.onEvent(event)
          if (parser.retry !== undefined) retry = parser.retry
        }
      } catch (err) {
        if (controller.signal.aborted) return
        handlers.onError?.(err)
      }
      await new Promise((resolve) => setTimeout(resolve, retry))
    }
  }
  void run()
  return () => controller.abort()
}
