import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { DownloadError, downloadResumable } from '@fleetgate/device-agent'
import { IMAGE_PATH, ImageServer, imageBytes } from './image-server.js'

describe('downloadResumable', () => {
  const image = imageBytes(50_000)
  let images: ImageServer
  let server: Server
  let url: string

  beforeEach(async () => {
    images = new ImageServer(image)
    server = createServer(images.handle)
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${IMAGE_PATH}`
  })
  afterEach(async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  })

  it('drops an attempt that stalls for idleTimeoutMs and resumes where it stopped', async () => {
    images.holdNextAfter(20_000) // never released
    const bytes = await downloadResumable(url, { idleTimeoutMs: 100, backoff: { baseMs: 1, capMs: 1 } })
    expect(bytes.equals(image)).toBe(true)
    expect(images.requests.map((r) => r.range)).toEqual([undefined, 'bytes=20000-'])
  })

  it('counts only attempts that fetch nothing against the retries', async () => {
    // Three cuts in a row, each after new bytes: more breaks than retries, and still complete.
    let cuts = 0
    const cutAgain = () => {
      if (++cuts < 3) images.cutNextAfter(10_000, cutAgain)
    }
    images.cutNextAfter(10_000, cutAgain)
    const bytes = await downloadResumable(url, { retries: 1, backoff: { baseMs: 1, capMs: 1 } })
    expect(bytes.equals(image)).toBe(true)
    expect(images.requests.map((r) => r.range)).toEqual([undefined, 'bytes=10000-', 'bytes=20000-', 'bytes=30000-'])
  })

  it('stops at once, without retrying, on a 4xx or a size other than expected', async () => {
    await expect(downloadResumable(url, { expectedSize: 49_999 })).rejects.toThrow(/offers 50000 bytes, expected 49999/)
    images.failWith = 403
    const failure = downloadResumable(url, { backoff: { baseMs: 1, capMs: 1 } })
    await expect(failure).rejects.toBeInstanceOf(DownloadError)
    await expect(failure).rejects.toThrow(/HTTP 403/)
    expect(images.requests).toHaveLength(2)
  })

  it('rejects with the abort reason when aborted mid-way, and makes no further attempt', async () => {
    images.holdNextAfter(20_000)
    const abort = new AbortController()
    let halfway!: () => void
    const progressed = new Promise<void>((resolve) => (halfway = resolve))
    const download = downloadResumable(url, { signal: abort.signal, backoff: { baseMs: 1, capMs: 1 }, onProgress: (received) => received >= 20_000 && halfway() })
    await progressed
    abort.abort(new Error('agent closing'))
    await expect(download).rejects.toThrow('agent closing')
    expect(images.requests).toHaveLength(1)
  })
})
