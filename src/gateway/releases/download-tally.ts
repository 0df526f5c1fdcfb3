import type { FastifyBaseLogger } from 'fastify'
import { addDownloads } from '../../firmware/release-repository.js'
import type { Db } from '../../storage/storage.js'

/** How often the downloads counted in memory are written (one UPDATE per release downloaded meanwhile). */
export const DOWNLOAD_FLUSH_MS = 10_000

/**
 * Counts image downloads in memory and writes them aggregated: the downloads are anonymous
 * (devices fetch without credentials), so a write per request would let anyone make the database
 * write as fast as they can send GETs. At most one UPDATE per release per `DOWNLOAD_FLUSH_MS`,
 * and one more when the app closes. A counter is a statistic, not an acknowledged write: the
 * counts of the last interval are lost if the process is killed (SIGKILL).
 */
export class DownloadTally {
  private pending = new Map<string, number>()
  private timer: NodeJS.Timeout | undefined
  private flushing: Promise<void> = Promise.resolve()

  constructor(
    private readonly db: Db,
    private readonly log: FastifyBaseLogger,
    private readonly flushMs = DOWNLOAD_FLUSH_MS,
  ) {}

  /** One download of `releaseId` (a release that exists: the caller just read it). */
  count(releaseId: string): void {
    this.pending.set(releaseId, (this.pending.get(releaseId) ?? 0) + 1)
    if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), this.flushMs)
      this.timer.unref()
    }
  }

  /** Writes what is counted (the app's close calls it); a failed write is logged and its counts dropped. */
  flush(): Promise<void> {
    clearTimeout(this.timer)
    this.timer = undefined
    const counts = this.pending
    this.pending = new Map()
    this.flushing = this.flushing.then(async () => {
      for (const [releaseId, n] of counts) {
        try {
          await addDownloads(this.db, releaseId, n)
        } catch (err) {
          this.log.warn({ err, release_id: releaseId, downloads: n }, 'could not record firmware downloads')
        }
      }
    })
    return this.flushing
  }
}
