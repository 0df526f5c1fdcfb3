import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { openEventStream, reconnectDelay, RECONNECT_MAX_MS, SILENCE_LIMIT_MS, type ServerEvent } from './event-stream'

/** A server stream the test writes into, chunk by chunk. */
function serverStream() {
  let controller!: ReadableStreamDefaultController<Uint8Array>
  const body = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) })
  const encoder = new TextEncoder()
  return {
    response: new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } }),
    write: (text: string) => controller.enqueue(encoder.encode(text)),
    end: () => controller.close(),
  }
}

/** A fake fetch answering each call with the next of `answers` (a stream, a status, or a network error). */
function fakeFetch(answers: (() => Response | Error)[]) {
  const calls: { at: number; signal: AbortSignal; headers: Record<string, string> }[] = []
  const fetch = vi.fn(async (_url: RequestInfo | URL, init: RequestInit = {}) => {
    calls.push({ at: Date.now(), signal: init.signal!, headers: init.headers as Record<string, string> })
    const answer = (answers[calls.length - 1] ?? (() => new Error('offline')))()
    if (answer instanceof Error) throw answer
    return answer
  })
  return { fetch: fetch as unknown as typeof globalThis.fetch, calls }
}

const refused = (status: number, headers: Record<string, string> = {}) => () => new Response('{}', { status, headers })

describe('event stream', () => {
  beforeEach(() => vi.useFakeTimers())
  afterEach(() => vi.useRealTimers())

  it('reads a CRLF line end split across two chunks as one line end', async () => {
    const server = serverStream()
    const { fetch } = fakeFetch([() => server.response])
    const events: ServerEvent[] = []
    const stop = openEventStream('t', { onEvent: (e) => events.push(e), onOpen: () => {} }, { fetch })
    await vi.advanceTimersByTimeAsync(0)
    server.write('retry: 3000\r\n\r\nid: 1\r\nevent: device\r\ndata: a\r')
    await vi.advanceTimersByTimeAsync(0)
    server.write('\ndata: b\r\n\r\n: keep-alive\r\n\r\nid: 2\r\nevent: device\r\ndata: {"x":1}\r\n\r\n')
    await vi.advanceTimersByTimeAsync(0)
    expect(events).toEqual([
      { id: '1', event: 'device', data: 'a\nb' },
      { id: '2', event: 'device', data: '{"x":1}' },
    ])
    stop()
  })

  it('reads events split anywhere, and names one without event: "message"', async () => {
    const server = serverStream()
    const { fetch } = fakeFetch([() => server.response])
    const events: ServerEvent[] = []
    const stop = openEventStream('t', { onEvent: (e) => events.push(e), onOpen: () => {} }, { fetch })
    await vi.advanceTimersByTimeAsync(0)
    for (const chunk of ['id: 7\nev', 'ent: device-st', 'atus\ndata: {"device_id":"pnp-01",', '"status":{}}\n', '\ndata: hi\n\n']) {
      server.write(chunk)
      await vi.advanceTimersByTimeAsync(0)
    }
    expect(events).toEqual([
      { id: '7', event: 'device-status', data: '{"device_id":"pnp-01","status":{}}' },
      { id: undefined, event: 'message', data: 'hi' },
    ])
    stop()
  })

  it('sends the token as a Bearer header', async () => {
    const { fetch, calls } = fakeFetch([() => serverStream().response])
    const stop = openEventStream('tok-1', { onEvent: () => {}, onOpen: () => {} }, { fetch })
    await vi.advanceTimersByTimeAsync(0)
    expect(calls[0]!.headers.authorization).toBe('Bearer tok-1')
    stop()
  })

  it('backs off with jitter, doubling from the server’s retry up to 30 s', () => {
    expect([0, 1, 2, 3, 4, 5, 9].map((n) => reconnectDelay(n, 3000, () => 1))).toEqual([3000, 6000, 12000, 24000, 30000, 30000, 30000])
    expect([0, 1, 2, 3, 4].map((n) => reconnectDelay(n, 3000, () => 0))).toEqual([1500, 3000, 6000, 12000, 15000])
    const draws = Array.from({ length: 200 }, () => reconnectDelay(2, 3000))
    expect(new Set(draws).size).toBeGreaterThan(50)
    expect(Math.min(...draws)).toBeGreaterThanOrEqual(6000)
    expect(Math.max(...draws)).toBeLessThanOrEqual(12000)
  })

  it('waits longer after each failed reconnect, never more than 30 s, and starts over after a stream that lasted', async () => {
    const lasting = serverStream()
    const { fetch, calls } = fakeFetch([
      ...Array.from({ length: 7 }, () => () => new Error('connection refused')),
      () => lasting.response,
      () => new Error('connection refused'),
    ])
    const downs: unknown[] = []
    const stop = openEventStream('t', { onEvent: () => {}, onOpen: () => {}, onDown: (e) => downs.push(e) }, { fetch, random: () => 1 })
    await vi.advanceTimersByTimeAsync(0)
    for (const wait of [3000, 6000, 12000, 24000, 30000, 30000, 30000]) await vi.advanceTimersByTimeAsync(wait)
    const waits = calls.slice(1).map((c, i) => c.at - calls[i]!.at)
    expect(waits).toEqual([3000, 6000, 12000, 24000, 30000, 30000, 30000])
    expect(downs).toHaveLength(7)
    // The eighth stream stays open (with keep-alives) for a minute, then ends: the next wait is the first one again.
    for (let i = 0; i < 4; i++) {
      lasting.write(': keep-alive\n\n')
      await vi.advanceTimersByTimeAsync(15_000)
    }
    lasting.end()
    const ended = Date.now()
    await vi.advanceTimersByTimeAsync(3000)
    expect(calls).toHaveLength(9)
    expect(calls[8]!.at - ended).toBe(3000)
    stop()
  })

  it('after a 429 (ten streams open) waits its Retry-After at least, and backs off from there', async () => {
    const { fetch, calls } = fakeFetch([refused(429, { 'retry-after': '10' }), refused(429, { 'retry-after': '10' }), refused(429, { 'retry-after': '10' }), refused(429, { 'retry-after': '10' })])
    const stop = openEventStream('t', { onEvent: () => {}, onOpen: () => {} }, { fetch, random: () => 1 })
    await vi.advanceTimersByTimeAsync(70_000)
    const waits = calls.slice(1, 4).map((c, i) => c.at - calls[i]!.at)
    expect(waits).toEqual([10_000, 10_000, 12_000])
    stop()
  })

  it('treats a stream silent for 45 s as lost, but not one that sends its keep-alive', async () => {
    const quiet = serverStream()
    const chatty = serverStream()
    const { fetch, calls } = fakeFetch([() => chatty.response, () => quiet.response, () => serverStream().response])
    const downs: unknown[] = []
    let opens = 0
    const stop = openEventStream('t', { onEvent: () => {}, onOpen: () => void opens++, onDown: (e) => downs.push(e) }, { fetch, random: () => 0 })
    await vi.advanceTimersByTimeAsync(0)
    for (let i = 0; i < 8; i++) {
      chatty.write(': keep-alive\n\n')
      await vi.advanceTimersByTimeAsync(15_000)
    }
    expect(calls).toHaveLength(1)
    chatty.end()
    await vi.advanceTimersByTimeAsync(1500)
    expect(calls).toHaveLength(2)
    quiet.write('retry: 3000\n\n')
    await vi.advanceTimersByTimeAsync(SILENCE_LIMIT_MS - 1)
    expect(calls[1]!.signal.aborted).toBe(false)
    await vi.advanceTimersByTimeAsync(1)
    expect(calls[1]!.signal.aborted).toBe(true)
    expect(String(downs.at(-1))).toMatch(/silent for 45 s/)
    await vi.advanceTimersByTimeAsync(1500)
    expect(calls).toHaveLength(3)
    expect(opens).toBe(3)
    stop()
  })

  it('stops on 401 and says so; stops for good when stopped', async () => {
    const { fetch, calls } = fakeFetch([refused(401), () => serverStream().response])
    const onUnauthorized = vi.fn()
    openEventStream('t', { onEvent: () => {}, onOpen: () => {}, onUnauthorized }, { fetch })
    await vi.advanceTimersByTimeAsync(60_000)
    expect(onUnauthorized).toHaveBeenCalledOnce()
    expect(calls).toHaveLength(1)

    const other = fakeFetch([() => new Error('down'), () => serverStream().response])
    const stop = openEventStream('t', { onEvent: () => {}, onOpen: () => {} }, { fetch: other.fetch })
    await vi.advanceTimersByTimeAsync(0)
    stop()
    await vi.advanceTimersByTimeAsync(60_000)
    expect(other.calls).toHaveLength(1)
  })
})
