import { createParser } from 'eventsource-parser'

/** One event of the §11 stream, as the router reads it. */
export interface ServerEvent {
  id?: string
  event: string
  data: string
}

export interface EventStreamHandlers {
  onEvent: (event: ServerEvent) => void
  /** The stream answered 200 and is being read (every (re)connection). */
  onOpen: () => void
  /** The stream ended, failed, fell silent or could not be opened; a reconnect is scheduled. */
  onDown?: (reason: unknown) => void
  /** 401: the token is no longer accepted; the loop stops until a new token opens a new stream. */
  onUnauthorized?: () => void
}

export interface EventStreamOptions {
  url?: string
  fetch?: typeof fetch
  /** Math.random, replaceable in tests. */
  random?: () => number
  now?: () => number
}

/** The first wait before reconnecting until the server says otherwise (its `retry:`, 3000 per §11). */
export const RECONNECT_BASE_MS = 3_000
/** No wait is longer (contract §12: "reconnects back off with jitter (up to 30 s)"). */
export const RECONNECT_MAX_MS = 30_000
/** The server sends `: keep-alive` at least every 15 s; this long without a byte, the stream is lost (§12). */
export const SILENCE_LIMIT_MS = 45_000
/** A stream that stayed open this long was a success: the back-off starts over. */
export const STABLE_STREAM_MS = 30_000

/**
 * The wait before reconnect attempt `attempt` (0 for the first): the ceiling doubles from `base`
 * up to 30 s, and the wait is drawn between half the ceiling and the ceiling ("equal jitter"), so
 * the consoles a server restart disconnected at once do not come back at once, yet none waits
 * for nothing.
 */
export function reconnectDelay(attempt: number, base: number, random: () => number = Math.random): number {
  const ceiling = Math.min(RECONNECT_MAX_MS, base * 2 ** Math.min(attempt, 16))
  return Math.round(ceiling / 2 + (random() * ceiling) / 2)
}

/** Retry-After of a 429 or 503, in ms (seconds or an HTTP date), capped at the longest back-off. */
export function retryAfterMs(response: Response, now: number): number {
  const value = response.headers.get('retry-after')
  if (!value) return 0
  const seconds = Number(value)
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(value) - now
  return Number.isFinite(ms) ? Math.min(RECONNECT_MAX_MS, Math.max(0, ms)) : 0
}

class StreamSilent extends Error {
  constructor() {
    super(`event stream silent for ${SILENCE_LIMIT_MS / 1000} s`)
  }
}

class StreamRefused extends Error {
  constructor(readonly status: number) {
    super(`event stream answered ${status}`)
  }
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms)
    function done() {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    signal.addEventListener('abort', done)
  })

/**
 * GET /api/v1/events read over fetch (EventSource cannot send the Bearer header), parsed by
 * `eventsource-parser`, reconnecting with a jittered back-off until stopped. A stream with no
 * byte for 45 s (not even the keep-alive comment) is aborted and reopened. Returns the stop function.
 */
export function openEventStream(token: string, handlers: EventStreamHandlers, options: EventStreamOptions = {}): () => void {
  const { url = '/api/v1/events', random = Math.random, now = Date.now } = options
  const fetchFn = options.fetch ?? ((input, init) => fetch(input, init))
  const stopped = new AbortController()
  let base = RECONNECT_BASE_MS
  let attempt = 0

  /** One connection, read to its end; answers how long to wait at least before the next (Retry-After), or null to stop. */
  const connect = async (): Promise<{ minWait: number; openedAt?: number } | null> => {
    const connection = new AbortController()
    const abort = () => connection.abort()
    stopped.signal.addEventListener('abort', abort)
    let silence: ReturnType<typeof setTimeout> | undefined
    let reader: ReadableStreamDefaultReader<string> | undefined
    const armSilence = () => {
      clearTimeout(silence)
      silence = setTimeout(() => {
        connection.abort(new StreamSilent())
        void reader?.cancel().catch(() => undefined)
      }, SILENCE_LIMIT_MS)
    }
    let openedAt: number | undefined
    let minWait = 0
    try {
      armSilence()
      const response = await fetchFn(url, {
        headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
        signal: connection.signal,
        cache: 'no-store',
      })
      if (response.status === 401) {
        handlers.onUnauthorized?.()
        return null
      }
      if (!response.ok || !response.body) {
        // 429: all ten of this user's streams are taken (other tabs); 503: the server is busy.
        minWait = retryAfterMs(response, now())
        void response.body?.cancel().catch(() => undefined)
        throw new StreamRefused(response.status)
      }
      openedAt = now()
      handlers.onOpen()
      const parser = createParser({
        onEvent: (message) => handlers.onEvent({ id: message.id, event: message.event ?? 'message', data: message.data }),
        onRetry: (ms) => {
          base = Math.min(RECONNECT_MAX_MS, Math.max(1, ms))
        },
      })
      reader = response.body.pipeThrough(new TextDecoderStream()).getReader()
      for (;;) {
        const { value, done } = await reader.read()
        if (done) break
        armSilence()
        parser.feed(value)
      }
      if (connection.signal.aborted) throw connection.signal.reason
      handlers.onDown?.(new Error('event stream ended'))
    } catch (err) {
      if (stopped.signal.aborted) return null
      handlers.onDown?.(connection.signal.reason instanceof StreamSilent ? connection.signal.reason : err)
    } finally {
      clearTimeout(silence)
      stopped.signal.removeEventListener('abort', abort)
    }
    return stopped.signal.aborted ? null : { minWait, openedAt }
  }

  const run = async () => {
    while (!stopped.signal.aborted) {
      const ended = await connect()
      if (!ended) return
      if (ended.openedAt !== undefined && now() - ended.openedAt >= STABLE_STREAM_MS) attempt = 0
      await sleep(Math.max(ended.minWait, reconnectDelay(attempt++, base, random)), stopped.signal)
    }
  }
  void run()
  return () => stopped.abort()
}
