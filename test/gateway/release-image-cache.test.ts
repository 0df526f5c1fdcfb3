import { describe, expect, it } from 'vitest'
import { ReleaseImageCache } from '../../src/gateway/releases/release-image-cache.js'

/** A loader over a few fake releases (id = sha) that counts its reads and can hold them back. */
function fakeImages() {
  const reads: string[] = []
  let gate: Promise<void> | undefined
  let open = () => {}
  let failNext = false
  return {
    reads,
    /** Reads wait until `release()` is called. */
    hold() {
      gate = new Promise((resolve) => (open = resolve))
      return () => {
        gate = undefined
        open()
      }
    },
    failOnce: () => (failNext = true),
    load: async (id: string) => {
      reads.push(id)
      await gate
      if (failNext) {
        failNext = false
        throw new Error('database unreachable')
      }
      return id === 'gone' ? undefined : Buffer.from(`image of ${id}`)
    },
  }
}

/** Downloads `id` start to end (acquire, then release at once). */
const use = async (cache: ReleaseImageCache, id: string) => (await cache.acquire(id, id))?.release()

describe('the release image cache', () => {
  it('shares one read among concurrent misses of an image; every download gets the same buffer', async () => {
    const images = fakeImages()
    const cache = new ReleaseImageCache(images.load)
    const release = images.hold()
    const pending = [...Array.from({ length: 10 }, () => cache.acquire('a', 'a')), ...Array.from({ length: 10 }, () => cache.acquire('b', 'b'))]
    release()
    const leases = await Promise.all(pending)
    expect(images.reads).toEqual(['a', 'b'])
    for (const lease of leases.slice(1, 10)) expect(lease!.bytes).toBe(leases[0]!.bytes)
    for (const lease of leases.slice(11)) expect(lease!.bytes).toBe(leases[10]!.bytes)
    expect(leases[0]!.bytes.toString()).toBe('image of a')
    expect(leases[10]!.bytes.toString()).toBe('image of b')
  })

  it('holds an image while a download of it is in flight, however many other images are used meanwhile', async () => {
    const images = fakeImages()
    const cache = new ReleaseImageCache(images.load, 1)
    const inFlight = await cache.acquire('a', 'a')
    for (const id of ['b', 'c', 'd', 'e']) await use(cache, id)
    expect(cache.held()).toEqual(['a', 'e'])
    const again = await cache.acquire('a', 'a')
    expect(again!.bytes).toBe(inFlight!.bytes)
    expect(images.reads).toEqual(['a', 'b', 'c', 'd', 'e'])
    again!.release()
    inFlight!.release()
    // Idle now: the most recently used idle image stays, the others go.
    expect(cache.held()).toEqual(['a'])
  })

  it('keeps the most recently used idle images up to its bound and drops the least recently used', async () => {
    const images = fakeImages()
    const cache = new ReleaseImageCache(images.load, 2)
    for (const id of ['a', 'b', 'c']) await use(cache, id)
    expect(cache.held()).toEqual(['b', 'c'])
    await use(cache, 'b')
    await use(cache, 'd')
    expect(cache.held()).toEqual(['b', 'd'])
    await use(cache, 'a')
    expect(images.reads).toEqual(['a', 'b', 'c', 'd', 'a'])
  })

  it('reads each of two images once when downloads of both alternate, one at a time (the active release and a rollout\'s)', async () => {
    const images = fakeImages()
    const cache = new ReleaseImageCache(images.load)
    for (let i = 0; i < 20; i++) await use(cache, i % 2 ? 'rollout' : 'active')
    expect(images.reads).toEqual(['active', 'rollout'])
  })

  it('counts each lease once: releasing it twice does not drop an image another download still holds', async () => {
    const images = fakeImages()
    const cache = new ReleaseImageCache(images.load, 0)
    const first = await cache.acquire('a', 'a')
    const second = await cache.acquire('a', 'a')
    first!.release()
    first!.release()
    await use(cache, 'b')
    expect(cache.held()).toEqual(['a'])
    second!.release()
    expect(cache.held()).toEqual([])
  })

  it('keeps neither a failed read nor a release that is gone: the next download reads again', async () => {
    const images = fakeImages()
    const cache = new ReleaseImageCache(images.load)
    images.failOnce()
    await expect(Promise.all([cache.acquire('a', 'a'), cache.acquire('a', 'a')])).rejects.toThrow('database unreachable')
    expect(cache.held()).toEqual([])
    expect((await cache.acquire('a', 'a'))!.bytes.toString()).toBe('image of a')
    expect(await cache.acquire('gone', 'gone')).toBeUndefined()
    expect(await cache.acquire('gone', 'gone')).toBeUndefined()
    expect(cache.held()).toEqual(['a'])
    expect(images.reads).toEqual(['a', 'a', 'gone', 'gone'])
  })
})
