import type { Db } from '../../storage/storage.js'
import { findImageBytes } from '../../firmware/release-repository.js'

interface Cached {
  sha256: string
  bytes: Buffer
}

/**
 * The active image's bytes, held once however many downloads run (contract §6). Keyed by
 * sha256: the caller asks for the sha it just read as active (a cheap query, so an
 * activation on any instance is noticed at the next request), and a different sha replaces
 * the held copy. Concurrent misses share one read from the database.
 */
export class ActiveImageCache {
  private cached: Cached | undefined
  private loading: { sha256: string; promise: Promise<Buffer | undefined> } | undefined

  constructor(private readonly db: Db) {}

  async get(releaseId: string, sha256: string): Promise<Buffer | undefined> {
    if (this.cached?.sha256 === sha256) return this.cached.bytes
    if (this.loading?.sha256 !== sha256) {
      const promise = findImageBytes(this.db, releaseId).then((bytes) => {
        if (bytes && this.loading?.promise === promise) this.cached = { sha256, bytes }
        return bytes
      })
      // Whatever the outcome, the next miss reads again.
      void promise.finally(() => {
        if (this.loading?.promise === promise) this.loading = undefined
      }).catch(() => undefined)
      // The old copy goes now, so two images are never held beyond the one being read.
      this.cached = undefined
      this.loading = { sha256, promise }
    }
    return this.loading.promise
  }
}
