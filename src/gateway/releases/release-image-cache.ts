/** Reads one release's image bytes (from the database); undefined when the release is gone. */
export type ImageLoader = (releaseId: string) => Promise<Buffer | undefined>

/** A use of a cached image: its bytes are held at least until `release()` (which is idempotent). */
export interface ImageLease {
  bytes: Buffer
  release: () => void
}

interface Entry {
  /** The one read from the database, shared by every request that missed meanwhile. */
  loading: Promise<Buffer | undefined>
  /** Leases not yet released: downloads of this image in flight (or about to start). */
  users: number
}

/** Images kept with no download in flight: the active release and a rollout's release (contract §14). */
export const IDLE_IMAGES_KEPT = 2

/**
 * Release images held in memory for downloads, one copy per image however many downloads
 * run (contract §6, §14). Keyed by sha256: the caller asks for the sha it just read for the
 * release (a cheap query, so an activation on any instance is noticed at the next request),
 * and two releases with the same bytes share one copy. Concurrent misses share one read.
 *
 * Eviction: an image is held while any download of it is in flight (from `acquire` to the
 * lease's `release`), so a request never reads a second copy of an image that is still being
 * sent. Once idle, it stays among the `keepIdle` most recently used idle images; beyond them
 * the least recently used idle image is dropped. So memory is one copy per release being
 * downloaded plus at most `keepIdle` idle copies, and under steady load on the active release
 * and a rollout's release neither is re-read between requests.
 */
export class ReleaseImageCache {
  /** In order of last use, oldest first (an entry is moved to the end when used or idled). */
  private readonly entries = new Map<string, Entry>()

  constructor(
    private readonly load: ImageLoader,
    private readonly keepIdle = IDLE_IMAGES_KEPT,
  ) {}

  /** The sha256 of every image held or being read, oldest use first. */
  held(): string[] {
    return [...this.entries.keys()]
  }

  /**
   * The bytes of release `releaseId`, whose image has `sha256`, held until the lease is
   * released; undefined when the release is gone. A failed read is thrown, and the next
   * request reads again.
   */
  async acquire(releaseId: string, sha256: string): Promise<ImageLease | undefined> {
    let entry = this.entries.get(sha256)
    if (!entry) entry = this.startLoading(releaseId, sha256)
    this.touch(sha256, entry)
    entry.users++
    let bytes: Buffer | undefined
    try {
      bytes = await entry.loading
    } finally {
      if (!bytes) this.unuse(sha256, entry)
    }
    if (!bytes) return undefined
    let released = false
    return {
      bytes,
      release: () => {
        if (released) return
        released = true
        this.unuse(sha256, entry)
      },
    }
  }

  private startLoading(releaseId: string, sha256: string): Entry {
    const entry: Entry = { loading: this.load(releaseId), users: 0 }
    // A failed or empty read is not kept: the next request reads again.
    const forget = () => {
      if (this.entries.get(sha256) === entry) this.entries.delete(sha256)
    }
    entry.loading.then((bytes) => bytes ?? forget(), forget)
    return entry
  }

  private touch(sha256: string, entry: Entry): void {
    this.entries.delete(sha256)
    this.entries.set(sha256, entry)
  }

  private unuse(sha256: string, entry: Entry): void {
    entry.users--
    if (entry.users > 0 || this.entries.get(sha256) !== entry) return
    this.touch(sha256, entry)
    let idle = 0
    for (const e of this.entries.values()) if (e.users === 0) idle++
    for (const [key, e] of this.entries) {
      if (idle <= this.keepIdle) break
      if (e.users === 0) {
        this.entries.delete(key)
        idle--
      }
    }
  }
}
