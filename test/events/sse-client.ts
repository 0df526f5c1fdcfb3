import http, { type IncomingHttpHeaders } from 'node:http'

export interface SseEvent {
  id: number
  event: string
  data: Record<string, unknown>
}

interface Waiter {
  match: (e: SseEvent) => boolean
  resolve: (e: SseEvent) => void
}

/** Reads a real `text/event-stream` response over HTTP, line by line, as a browser would. */
export class SseClient {
  readonly events: SseEvent[] = []
  readonly comments: string[] = []
  /** Every field line as received, in order (`retry: 3000`, `id: 1`, …). */
  readonly lines: string[] = []
  /**
   * Resolves when the response is over: `finished` when the server sent the end of the response
   * (its last chunk), `cut` when the connection went without it.
   */
  readonly ended: Promise<'finished' | 'cut'>
  private waiters: Waiter[] = []
  private commentWaiters: ((text: string) => void)[] = []
  private buffer = ''
  private current: Partial<{ id: number; event: string; data: string }> = {}

  private constructor(
    readonly status: number,
    readonly headers: IncomingHttpHeaders,
    private readonly response: http.IncomingMessage,
    readonly body: string,
  ) {
    response.setEncoding('utf8')
    response.on('data', (chunk: string) => this.feed(chunk))
    this.ended = new Promise((resolve) => {
      const over = () => resolve(response.complete ? 'finished' : 'cut')
      response.on('end', over)
      response.on('close', over)
      response.on('error', over)
    })
  }

  /** Opens `GET url`; resolves once the headers arrived (an error answer is read whole). */
  static open(url: string, authorization?: string): Promise<SseClient> {
    return new Promise((resolve, reject) => {
      const request = http.get(url, { headers: { accept: 'text/event-stream', ...(authorization ? { authorization } : {}) } }, (res) => {
        if (res.statusCode !== 200) {
          let body = ''
          res.setEncoding('utf8')
          res.on('data', (c: string) => (body += c))
          res.on('end', () => resolve(new SseClient(res.statusCode!, res.headers, res, body)))
          return
        }
        resolve(new SseClient(200, res.headers, res, ''))
      })
      request.on('error', reject)
    })
  }

  /** The first event (received already or to come) that matches. */
  next(event: string, match: (data: Record<string, unknown>) => boolean = () => true): Promise<SseEvent> {
    const test = (e: SseEvent) => e.event === event && match(e.data)
    const seen = this.events.find(test)
    if (seen) return Promise.resolve(seen)
    return new Promise((resolve) => this.waiters.push({ match: test, resolve }))
  }

  nextComment(): Promise<string> {
    return new Promise((resolve) => this.commentWaiters.push(resolve))
  }

  of(event: string, match: (data: Record<string, unknown>) => boolean = () => true): SseEvent[] {
    return this.events.filter((e) => e.event === event && match(e.data))
  }

  close(): void {
    this.response.destroy()
  }

  private feed(chunk: string): void {
    this.buffer += chunk
    let newline: number
    while ((newline = this.buffer.indexOf('\n')) >= 0) {
      const line = this.buffer.slice(0, newline)
      this.buffer = this.buffer.slice(newline + 1)
      this.line(line)
    }
  }

  private line(line: string): void {
    if (line === '') {
      const { id, event, data } = this.current
      this.current = {}
      if (event === undefined || data === undefined) return
      const parsed: SseEvent = { id: id!, event, data: JSON.parse(data) as Record<string, unknown> }
      this.events.push(parsed)
      this.waiters = this.waiters.filter((w) => {
        if (!w.match(parsed)) return true
        w.resolve(parsed)
        return false
      })
      return
    }
    if (line.startsWith(':')) {
      const text = line.slice(1).trim()
      this.comments.push(text)
      for (const resolve of this.commentWaiters.splice(0)) resolve(text)
      return
    }
    this.lines.push(line)
    const colon = line.indexOf(':')
    const field = line.slice(0, colon)
    const value = line.slice(colon + 1).replace(/^ /, '')
    if (field === 'id') this.current.id = Number(value)
    else if (field === 'event') this.current.event = value
    else if (field === 'data') {
      if (this.current.data !== undefined) throw new Error('data: must be one line')
      this.current.data = value
    }
  }
}
