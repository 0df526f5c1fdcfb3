import { createHash } from 'node:crypto'
import { once } from 'node:events'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  DeviceAgent,
  ok,
  RouteTable,
  type FirmwareHandler,
  type FirmwareOffer,
  type FirmwareOptions,
  type FirmwareStatus,
  type RunningFirmware,
} from '@fleetgate/device-agent'
import { FakeGateway } from './fake-gateway.js'
import { IMAGE_PATH, ImageServer, imageBytes, offerFor } from './image-server.js'
import { statusesUntil, type StatusFrame } from './status-frames.js'

const KEY = 'device-secret-0123456789'
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex')


/** `downloading 40`, `installed`: a status as one short line. */
const step = (s: FirmwareStatus) => (s.progress === undefined ? s.state : `${s.state} ${s.progress}`)

class RecordingHandler implements FirmwareHandler {
  busy = false
  running: RunningFirmware | undefined
  readonly installs: { image: Buffer; offer: FirmwareOffer }[] = []
  onInstall: (progress: (percent: number) => void) => Promise<void> = async (progress) => {
    progress(50)
    progress(100)
  }

  isBusy(): boolean {
    return this.busy
  }

  current(): RunningFirmware | undefined {
    return this.running
  }

  async install(image: Buffer, offer: FirmwareOffer, progress: (percent: number) => void): Promise<void> {
    this.installs.push({ image, offer })
    await this.onInstall(progress)
  }
}

describe('device agent firmware offers', () => {
  const image = imageBytes(100_000)
  const { type: _, ...offer } = offerFor(image)
  let images: ImageServer
  let gateway: FakeGateway
  let agent: DeviceAgent | undefined
  let handler: RecordingHandler

  beforeEach(async () => {
    images = new ImageServer(image)
    gateway = await FakeGateway.start({ http: images.handle })
    handler = new RecordingHandler()
  })
  afterEach(async () => {
    await agent?.close()
    agent = undefined
    await gateway.close()
  })

  /** A registered link whose first heartbeat arrived. Progress is not throttled unless asked. */
  const link = async (firmware: Partial<FirmwareOptions> | null = {}) => {
    const routes = new RouteTable().get('/ping', () => ok({ pong: true }))
    agent = new DeviceAgent({
      url: gateway.url,
      deviceId: 'pnp-01',
      key: KEY,
      hostname: 'pnp-01',
      version: '1',
      routes,
      backoff: { baseMs: 10, capMs: 10 },
      ...(firmware && { firmware: { handler, progressIntervalMs: 0, downloadBackoff: { baseMs: 1, capMs: 1 }, ...firmware } }),
    }).start()
    const linked = await gateway.nextLink()
    await linked.acceptRegistration()
    await linked.nextFrame('heartbeat')
    return linked
  }

  it('answers busy, without downloading, while the machine is busy; a later offer installs', async () => {
    handler.busy = true
    const l = await link()
    l.send(offerFor(image))
    expect(await l.nextFrame('firmware-status')).toEqual({ type: 'firmware-status', rollout_id: 'ro-1', release_id: 'rel-2', state: 'busy' })
    expect(images.requests).toEqual([])
    expect(handler.installs).toEqual([])

    handler.busy = false
    l.send(offerFor(image))
    expect((await statusesUntil(l, 'installed', 'failed')).at(-1)!.state).toBe('installed')
    expect(handler.installs).toHaveLength(1)
  })

  it('downloads, checks and installs an offer, reporting each step in order with its progress', async () => {
    const l = await link()
    const emitted: FirmwareStatus[] = []
    const offers: unknown[] = []
    agent!.on('firmware', (status) => emitted.push(status))
    agent!.on('offer', (received) => offers.push(received))
    l.send(offerFor(image))
    const statuses = await statusesUntil(l, 'installed', 'failed')
    const steps = statuses.map(step)
    expect(steps[0]).toBe('downloading 0')
    expect(steps.slice(-5)).toEqual(['downloading 100', 'installing 0', 'installing 50', 'installing 100', 'installed'])
    const downloading = statuses.filter((s) => s.state === 'downloading').map((s) => s.progress!)
    expect(downloading).toEqual([...downloading].sort((a, b) => a - b))
    expect(statuses.every((s) => s.rollout_id === 'ro-1' && s.release_id === 'rel-2')).toBe(true)
    expect(emitted).toEqual(statuses.map(({ type: _, ...status }) => status))
    expect(offers).toEqual([offer])
    expect(handler.installs).toHaveLength(1)
    expect(handler.installs[0]!.image.equals(image)).toBe(true)
    expect(handler.installs[0]!.offer).toEqual(offer)
    expect(images.requests).toEqual([{ path: IMAGE_PATH, range: undefined, ifRange: undefined }])
  })

  it('resumes a broken download with Range and If-Range, and installs the exact bytes', async () => {
    const l = await link()
    images.cutNextAfter(40_000)
    l.send(offerFor(image))
    expect((await statusesUntil(l, 'installed', 'failed')).at(-1)).toMatchObject({ state: 'installed' })
    expect(images.requests).toEqual([
      { path: IMAGE_PATH, range: undefined, ifRange: undefined },
      { path: IMAGE_PATH, range: 'bytes=40000-', ifRange: `"${sha256(image)}"` },
    ])
    expect(handler.installs[0]!.image.equals(image)).toBe(true)
  })

  it('starts over from byte 0 when the image changed between two attempts', async () => {
    const stale = imageBytes(100_000, 2)
    images.serve(stale)
    images.cutNextAfter(40_000, () => images.serve(image))
    const l = await link()
    l.send(offerFor(image))
    expect((await statusesUntil(l, 'installed', 'failed')).at(-1)).toMatchObject({ state: 'installed' })
    // If-Range carried the first image's tag: the server answered the whole new image.
    expect(images.requests.map((r) => [r.range, r.ifRange])).toEqual([
      [undefined, undefined],
      ['bytes=40000-', `"${sha256(stale)}"`],
    ])
    expect(handler.installs[0]!.image.equals(image)).toBe(true)
  })

  it('starts over from byte 0 when a server ignoring If-Range answers a range of another image', async () => {
    const stale = imageBytes(100_000, 2)
    images.serve(stale)
    images.ignoreIfRange = true
    images.cutNextAfter(40_000, () => images.serve(image))
    const l = await link()
    l.send(offerFor(image))
    expect((await statusesUntil(l, 'installed', 'failed')).at(-1)).toMatchObject({ state: 'installed' })
    expect(images.requests.map((r) => r.range)).toEqual([undefined, 'bytes=40000-', undefined])
    expect(handler.installs[0]!.image.equals(image)).toBe(true)
  })

  it.each([
    ['a size', { size: image.length + 1 }, /size mismatch/],
    ['a sha256', { sha256: 'ab'.repeat(32) }, /sha256 is [0-9a-f]{64}, expected (ab){32}/],
    ['a crc32', { crc32: '0x00000000' }, /crc32 is [0-9a-f]{8}, expected 0x00000000/],
  ])('reports failed, without installing, when the image does not match %s of the offer', async (_, wrong, error) => {
    const l = await link()
    l.send(offerFor(image, wrong))
    const last = (await statusesUntil(l, 'installed', 'failed')).at(-1)!
    expect(last).toMatchObject({ state: 'failed', error: expect.stringMatching(error) })
    expect(handler.installs).toEqual([])
  })

  it('reports failed when the server sends another image than the one offered', async () => {
    images.serve(imageBytes(100_000, 3))
    const l = await link()
    l.send(offerFor(image))
    const last = (await statusesUntil(l, 'installed', 'failed')).at(-1)!
    expect(last.state).toBe('failed')
    expect(last.error).toMatch(/^downloaded image does not match the offer: sha256 is .*; crc32 is /)
    expect(handler.installs).toEqual([])
  })

  it.each([
    ['sha256', { sha256: sha256(image).toUpperCase() }],
    ['image_version', { image_version: 42 }],
  ])('reports installed at once, without a download, for the image it runs (by %s), even when busy', async (_, running) => {
    handler.running = running
    handler.busy = true
    const l = await link()
    l.send(offerFor(image))
    expect(await l.nextFrame('firmware-status')).toEqual({ type: 'firmware-status', rollout_id: 'ro-1', release_id: 'rel-2', state: 'installed' })
    expect(images.requests).toEqual([])
    expect(handler.installs).toEqual([])
  })

  it('goes by sha256 over image_version: another image of the same version is installed', async () => {
    handler.running = { sha256: 'cd'.repeat(32), image_version: 42 }
    const l = await link()
    l.send(offerFor(image))
    expect((await statusesUntil(l, 'installed', 'failed')).map(step)[0]).toBe('downloading 0')
    expect(handler.installs).toHaveLength(1)
  })

  it('reports failed with the message of an install hook that throws, cut to 1024 characters', async () => {
    handler.onInstall = async (progress) => {
      progress(30)
      throw new Error(`flash write failed at 0x08004000 ${'x'.repeat(2000)}`)
    }
    const l = await link()
    l.send(offerFor(image))
    const statuses = await statusesUntil(l, 'installed', 'failed')
    expect(statuses.map(step).slice(-3)).toEqual(['installing 0', 'installing 30', 'failed'])
    const { error } = statuses.at(-1)!
    expect(error).toMatch(/^flash write failed at 0x08004000 x+$/)
    expect(error).toHaveLength(1024)
  })

  it('ignores a second offer of the rollout in progress, declines another rollout as busy, and keeps serving requests', async () => {
    const release = images.holdNextAfter(30_000)
    const l = await link()
    l.send(offerFor(image))
    // Held after 30 % of the image.
    while ((await l.nextFrame<StatusFrame>('firmware-status')).progress !== 30);
    l.send(offerFor(image))
    l.send(offerFor(image, { rollout_id: 'ro-9' }))
    expect(await l.nextFrame('firmware-status')).toEqual({ type: 'firmware-status', rollout_id: 'ro-9', release_id: 'rel-2', state: 'busy' })
    l.request('r1', 'GET', '/ping')
    expect(await l.response('r1')).toMatchObject({ status: 200, data: { pong: true } })

    release()
    const statuses = await statusesUntil(l, 'installed', 'failed')
    expect(statuses.map(step).at(-1)).toBe('installed')
    expect(statuses.every((s) => s.rollout_id === 'ro-1')).toBe(true)
    expect(images.requests).toHaveLength(1)
    expect(handler.installs).toHaveLength(1)
  })

  it('reports installed on the next link, after its first heartbeat, when the install re-links', async () => {
    handler.onInstall = async () => agent!.relink()
    const first = await link()
    first.send(offerFor(image))
    await statusesUntil(first, 'installing')
    expect(await first.closed).toEqual({ code: 1000, reason: 'relinking' })

    const second = await gateway.nextLink()
    await second.acceptRegistration()
    expect(await second.nextFrame('firmware-status')).toEqual({ type: 'firmware-status', rollout_id: 'ro-1', release_id: 'rel-2', state: 'installed' })
    expect(second.received.map((f) => f.type)).toEqual(['register', 'heartbeat', 'firmware-status'])
    expect(first.received.some((f) => f.type === 'firmware-status' && f.state === 'installed')).toBe(false)
  })

  it('keeps the result of an install that ends while the link is down and sends it once registered again', async () => {
    let finish!: () => void
    handler.onInstall = () => new Promise<void>((resolve) => (finish = resolve))
    const first = await link()
    first.send(offerFor(image))
    await statusesUntil(first, 'installing')
    const disconnected = once(agent!, 'disconnected')
    first.ws.terminate()
    await disconnected
    const reported = new Promise<FirmwareStatus>((resolve) => agent!.on('firmware', resolve))
    finish()
    expect(await reported).toEqual({ rollout_id: 'ro-1', release_id: 'rel-2', state: 'installed' })

    const second = await gateway.nextLink()
    await second.acceptRegistration()
    expect(await second.nextFrame('firmware-status')).toMatchObject({ rollout_id: 'ro-1', state: 'installed' })
    expect(second.received.map((f) => f.type)).toEqual(['register', 'heartbeat', 'firmware-status'])
  })

  it('reports failed at once on a download answered 404, and after the retries on repeated 503s', async () => {
    const l = await link({ downloadRetries: 2 })
    l.send(offerFor(image, { url: '/api/v1/firmware/slave/releases/gone/system.bin' }))
    expect((await statusesUntil(l, 'failed', 'installed')).at(-1)).toMatchObject({ state: 'failed', error: expect.stringMatching(/HTTP 404/) })
    expect(images.requests).toHaveLength(1)

    images.failWith = 503
    l.send(offerFor(image, { rollout_id: 'ro-2' }))
    expect((await statusesUntil(l, 'failed', 'installed')).at(-1)).toMatchObject({ state: 'failed', error: expect.stringMatching(/failed 3 times in a row: HTTP 503/) })
    expect(images.requests).toHaveLength(4)
  })

  it('reports failed when the agent has no firmware handler', async () => {
    const l = await link(null)
    l.send(offerFor(image))
    expect(await l.nextFrame('firmware-status')).toMatchObject({ rollout_id: 'ro-1', state: 'failed', error: expect.stringMatching(/no firmware handler/) })
    expect(images.requests).toEqual([])
  })

  it('sendFirmwareStatus checks what it sends: ids, progress in 0–100, error cut to 1024', async () => {
    const l = await link()
    expect(agent!.sendFirmwareStatus({ rollout_id: 'ro-5', release_id: 'rel-5', state: 'downloading', progress: 140.7 })).toBe(true)
    expect(await l.nextFrame('firmware-status')).toEqual({ type: 'firmware-status', rollout_id: 'ro-5', release_id: 'rel-5', state: 'downloading', progress: 100 })
    agent!.sendFirmwareStatus({ rollout_id: 'ro-5', release_id: 'rel-5', state: 'failed', error: 'e'.repeat(5000) })
    expect((await l.nextFrame<StatusFrame>('firmware-status')).error).toHaveLength(1024)
    expect(() => agent!.sendFirmwareStatus({ rollout_id: '../x', release_id: 'rel-5', state: 'installed' })).toThrow(TypeError)
    expect(() => agent!.sendFirmwareStatus({ rollout_id: 'ro-5', release_id: 'rel-5', state: 'rebooting' as 'installed' })).toThrow(/state/)
  })
})
