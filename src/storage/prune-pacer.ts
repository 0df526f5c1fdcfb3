import { setTimeout as pause } from 'node:timers/promises'

/** Rows per DELETE at most… */
export const PRUNE_BATCH = 1000
/** …and at least, however long a batch takes. */
export const MIN_PRUNE_BATCH = 50
/**
 * What one batch should take at most: each batch is sized from how long the last one took. On
 * SQLite a batch holds the event loop (better-sqlite3 is synchronous), so every request arriving
 * meanwhile waits for all of it: 1,000 points of a 10M-point table took about 30 ms there, where
 * an ingest request's p99 is 5–8 ms (`bench -- data`). PostgreSQL deletes 1,000 in a few
 * milliseconds, so its batches stay near the full size.
 */
export const PRUNE_BATCH_TARGET_MS = 5
/**
 * Between two batches a pass rests at least as long as the last batch took (and this long at
 * least): pruning a large backlog holds SQLite's write lock (and its one connection, and the event
 * loop) a fifth of the time or less at the target size, and paces PostgreSQL's WAL, so ingest
 * keeps its pace while a backlog is pruned. PostgreSQL deletes a batch by ctid in a few milliseconds: resting only as
 * long let a backlog's WAL slow ingest 7× (p99, `bench -- data`); 20 ms caps pruning at 50,000
 * rows a second.
 */
export const MIN_PRUNE_PAUSE_MS = 20

/** The next batch's size after one of `size` rows took `tookMs`: scaled towards the target, at most doubling. */
export function nextBatchSize(size: number, tookMs: number): number {
  const scaled = Math.floor((size * PRUNE_BATCH_TARGET_MS) / Math.max(tookMs, 0.1))
  return Math.min(PRUNE_BATCH, 2 * size, Math.max(MIN_PRUNE_BATCH, scaled))
}

/**
 * Paces a pruning loop: `size` rows for the next DELETE, then `rest` after a full one (a batch
 * that deletes fewer than `size` rows was the last of its loop); `stopped` ends the loop early.
 */
export interface Pacer {
  readonly size: number
  readonly stopped: boolean
  /** After a full batch that began at `startedAt` (`performance.now()`); false when the pass is to stop. */
  rest(startedAt: number): Promise<boolean>
}

/** The retention job's pacer: each batch sized towards PRUNE_BATCH_TARGET_MS, rests of at least MIN_PRUNE_PAUSE_MS. */
export class PrunePacer implements Pacer {
  size = PRUNE_BATCH

  constructor(private readonly signal?: AbortSignal) {}

  get stopped(): boolean {
    return this.signal?.aborted ?? false
  }

  /** Sizes the next batch from this one's time, and rests. */
  async rest(startedAt: number): Promise<boolean> {
    const took = performance.now() - startedAt
    this.size = nextBatchSize(this.size, took)
    try {
      await pause(Math.max(MIN_PRUNE_PAUSE_MS, took), undefined, { signal: this.signal })
      return true
    } catch {
      return false // stopped while resting
    }
  }
}

/**
 * DELETEs of `pacer.size` rows, resting after each full one, until one comes back short or the
 * pass stops: the rows deleted, and whether it stopped.
 */
export async function pruneUntilShort(pacer: Pacer, deleteBatch: (size: number) => Promise<number>): Promise<{ deleted: number; stopped: boolean }> {
  let deleted = 0
  for (;;) {
    if (pacer.stopped) return { deleted, stopped: true }
    const started = performance.now()
    const size = pacer.size
    const n = await deleteBatch(size)
    deleted += n
    if (n < size) return { deleted, stopped: false }
    if (!(await pacer.rest(started))) return { deleted, stopped: true }
  }
}
