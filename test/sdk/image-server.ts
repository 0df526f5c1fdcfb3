import { createHash } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { crc32Hex } from '@fleetgate/device-agent/lib'
import type { FirmwareOffer } from '@fleetgate/device-agent'

export const IMAGE_PATH = '/api/v1/firmware/slave/releases/rel-2/system.bin'

export interface ImageRequest {
  path: string
  range?: string
  ifRange?: string
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex')

/** Bytes that differ from one call to the next (a pattern, so a spliced download shows). */
export function imageBytes(size: number, seed = 1): Buffer {
  return Buffer.from(Array.from({ length: size }, (_, i) => (i * 31 + seed * 7 + (i >> 8)) & 0xff))
}

/** An offer whose size and digests are those of `image`, for rollout `ro-1` and release `rel-2`. */
export function offerFor(image: Buffer, overrides: Partial<FirmwareOffer> = {}): FirmwareOffer & { type: 'firmware-offer' } {
  return {
    type: 'firmware-offer',
    rollout_id: 'ro-1',
    release_id: 'rel-2',
    image_version: 42,
    display_version: '2.4.0+42',
    size: image.length,
    sha256: sha256(image),
    crc32: crc32Hex(image),
    url: IMAGE_PATH,
    ...overrides,
  }
}

/**
 * The gateway's per-release `system.bin` (contract §14): ETag = "sha256", a single `bytes=N-`
 * Range (206), If-Range. It can be told to cut the next answer, or hold it, part-way.
 */
export class ImageServer {
  readonly requests: ImageRequest[] = []
  private image!: Buffer
  private etag!: string
  /** The next answer sends this many body bytes, then the connection drops. */
  private cut: { at: number; then?: () => void } | undefined
  private hold: { at: number; release: Promise<void> } | undefined
  /** Answer 206 to any Range, as a server that does not implement If-Range would. */
  ignoreIfRange = false
  /** Every request is answered with this status and no body. */
  failWith: number | undefined

  constructor(image: Buffer) {
    this.serve(image)
  }

  serve(image: Buffer): void {
    this.image = image
    this.etag = `"${sha256(image)}"`
  }

  /** The next answer sends `bytes` body bytes and drops the connection, calling `then` (to change the image, say). */
  cutNextAfter(bytes: number, then?: () => void): void {
    this.cut = { at: bytes, then }
  }

  /** The next answer sends `bytes` body bytes and waits for the returned function before the rest. */
  holdNextAfter(bytes: number): () => void {
    let release!: () => void
    this.hold = { at: bytes, release: new Promise<void>((resolve) => (release = resolve)) }
    return release
  }

  readonly handle = (req: IncomingMessage, res: ServerResponse): void => {
    const path = req.url ?? ''
    this.requests.push({ path, range: req.headers.range, ifRange: req.headers['if-range'] as string | undefined })
    if (path !== IMAGE_PATH) return void res.writeHead(404).end()
    if (this.failWith !== undefined) return void res.writeHead(this.failWith).end()
    const size = this.image.length
    const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? '')
    const ifRange = req.headers['if-range']
    const partial = range !== null && (this.ignoreIfRange || ifRange === undefined || ifRange === this.etag)
    const start = partial ? Number(range[1]) : 0
    if (start >= size && size > 0) return void res.writeHead(416, { 'content-range': `bytes */${size}` }).end()
    const body = this.image.subarray(start)
    res.writeHead(partial ? 206 : 200, {
      etag: this.etag,
      'accept-ranges': 'bytes',
      'content-type': 'application/octet-stream',
      'content-length': body.length,
      ...(partial && { 'content-range': `bytes ${start}-${size - 1}/${size}` }),
    })
    const cut = this.cut
    this.cut = undefined
    const hold = this.hold
    this.hold = undefined
    if (cut) {
      res.write(body.subarray(0, cut.at), () => {
        cut.then?.()
        res.destroy()
      })
    } else if (hold) {
      res.write(body.subarray(0, hold.at))
      void hold.release.then(() => res.end(body.subarray(hold.at)))
    } else res.end(body)
  }
}
