import { request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http'
import { request as httpsRequest, type RequestOptions } from 'node:https'
import { setTimeout as sleep } from 'node:timers/promises'
import { Backoff, type BackoffOptions } from './backoff.js'

export interface DownloadOptions {
  /** The size the file must have: a server announcing another size, or sending more, fails at once. */
  expectedSize?: number
  /** Retries, in a row, of attempts that fetch no new byte, before giving up (one that does starts the count over). Default 5. */
  retries?: number
  /** Delay before each new attempt. Default base 1 s, cap 30 s, full jitter. */
  backoff?: BackoffOptions
  /** An attempt that receives nothing for this long is dropped (and resumed). Default 30 s. */
  idleTimeoutMs?: number
  signal?: AbortSignal
  /** Bytes held so far, after each chunk; they fall back to 0 when the file changed on the server. */
  onProgress?: (received: number, total: number | undefined) => void
  /** Extra `http(s).request` options: TLS settings (`ca`, `cert`, `key`, `rejectUnauthorized`), an agent. */
  requestOptions?: RequestOptions
}

/** Why a download stopped; `retryable` errors end one attempt only (until the retries run out). */
export class DownloadError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message)
    this.name = 'DownloadError'
  }
}

/**
 * Downloads `url` into memory, resuming a broken transfer with `Range: bytes=N-` and `If-Range`
 * (the first answer's strong ETag, else its Last-Modified): a file that changed on the server
 * starts over from byte 0 instead of being spliced. Without a validator it always starts over.
 */
export function downloadResumable(url: string, options: DownloadOptions = {}): Promise<Buffer> {
  return new ResumableDownload(url, options).run()
}

const CONTENT_RANGE = /^bytes (\d+)-(\d+)\/(\d+|\*)$/
const UNSATISFIED_RANGE = /^bytes \*\/(\d+)$/

class ResumableDownload {
  private chunks: Buffer[] = []
  private received = 0
  /** Bytes received during the current attempt: an attempt that got some is not counted as a failure. */
  private fetched = 0
  private total: number | undefined
  private validator: string | undefined
  private readonly idleTimeoutMs: number

  constructor(
    private readonly url: string,
    private readonly options: DownloadOptions,
  ) {
    this.idleTimeoutMs = options.idleTimeoutMs ?? 30_000
  }

  async run(): Promise<Buffer> {
    const retries = this.options.retries ?? 5
    const backoff = new Backoff(this.options.backoff ?? { baseMs: 1000, capMs: 30_000 })
    const signal = this.options.signal
    let failures = 0
    for (;;) {
      this.fetched = 0
      try {
        await this.attempt()
        return Buffer.concat(this.chunks, this.received)
      } catch (err) {
        if (signal?.aborted) throw signal.reason
        if (err instanceof DownloadError && !err.retryable) throw err
        if (this.fetched > 0) {
          failures = 0
          backoff.reset()
        }
        if (++failures > retries) {
          throw new DownloadError(`download of ${this.url} failed ${failures} times in a row: ${(err as Error).message}`, false)
        }
        await sleep(backoff.next(), undefined, { signal })
      }
    }
  }

  /** One request; resolves once every byte is held. */
  private async attempt(): Promise<void> {
    const headers: OutgoingHttpHeaders = { 'accept-encoding': 'identity' }
    if (this.received > 0 && this.validator !== undefined) {
      headers.range = `bytes=${this.received}-`
      headers['if-range'] = this.validator
    } else this.restart()
    const res = await this.get(headers)
    try {
      if (this.accept(res) === 'complete') return
      const limit = this.total ?? this.options.expectedSize
      for await (const chunk of res as AsyncIterable<Buffer>) {
        if (limit !== undefined && this.received + chunk.length > limit) {
          throw new DownloadError(`the server sent more than ${limit} bytes (size mismatch)`, false)
        }
        this.chunks.push(chunk)
        this.received += chunk.length
        this.fetched += chunk.length
        this.options.onProgress?.(this.received, this.total)
      }
      if (this.total !== undefined && this.received < this.total) {
        throw new DownloadError(`the connection ended after ${this.received} of ${this.total} bytes`, true)
      }
    } finally {
      res.destroy()
    }
  }

  /** Checks an answer's status and headers and positions the download where its body starts. */
  private accept(res: IncomingMessage): 'body' | 'complete' {
    const status = res.statusCode ?? 0
    if (status === 200) {
      this.restart()
      this.validator = validatorOf(res)
      const length = res.headers['content-length']
      this.setTotal(length === undefined ? undefined : Number(length))
      return 'body'
    }
    if (status === 206) {
      const range = CONTENT_RANGE.exec(String(res.headers['content-range'] ?? ''))
      const validator = validatorOf(res)
      const changed = this.received > 0 && validator !== undefined && validator !== this.validator
      if (!range || Number(range[1]) !== this.received || changed) {
        // A server that ignores If-Range, or answers another range: start over rather than splice.
        this.restart()
        throw new DownloadError('the server answered a range that does not continue the download; starting over', true)
      }
      this.validator ??= validator
      this.setTotal(range[3] === '*' ? undefined : Number(range[3]))
      return 'body'
    }
    if (status === 416) {
      const size = UNSATISFIED_RANGE.exec(String(res.headers['content-range'] ?? ''))
      if (size && Number(size[1]) === this.received) return 'complete'
      this.restart()
      throw new DownloadError('range not satisfiable; starting over', true)
    }
    const retryable = status === 408 || status === 429 || status >= 500
    throw new DownloadError(`HTTP ${status} from ${this.url}`, retryable)
  }

  private setTotal(total: number | undefined): void {
    const expected = this.options.expectedSize
    if (total !== undefined && expected !== undefined && total !== expected) {
      throw new DownloadError(`the server offers ${total} bytes, expected ${expected} (size mismatch)`, false)
    }
    this.total = total
  }

  private restart(): void {
    this.chunks = []
    this.received = 0
    this.total = undefined
    this.validator = undefined
  }

  private get(headers: OutgoingHttpHeaders): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      const target = new URL(this.url)
      const request = target.protocol === 'https:' ? httpsRequest : httpRequest
      const req = request(target, { ...this.options.requestOptions, method: 'GET', headers, signal: this.options.signal }, resolve)
      req.setTimeout(this.idleTimeoutMs, () => req.destroy(new DownloadError(`no data for ${this.idleTimeoutMs} ms`, true)))
      req.on('error', reject)
      req.end()
    })
  }
}

/** A strong ETag, else Last-Modified: what `If-Range` may carry (RFC 9110 §13.1.5). */
function validatorOf(res: IncomingMessage): string | undefined {
  const etag = res.headers.etag
  if (etag && !etag.startsWith('W/')) return etag
  return res.headers['last-modified']
}
