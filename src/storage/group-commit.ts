import { isDependencyUnavailable } from './unreachable-database.js'

export interface GroupCommitOptions<T> {
  /** Writes the items in one transaction, all or nothing. */
  commit(items: T[]): Promise<void>
  /**
   * Weight (e.g. rows) that may wait for a writer, at most; beyond, `submit` rejects with
   * `whenFull()` and holds nothing, so memory stays bounded when the database falls behind. An
   * item heavier than this is still taken when nothing waits.
   */
  maxQueued: number
  /** The error a submission gets when the queue is full. */
  whenFull(): Error
  /** Items per commit, at most (default 64). */
  maxGroup?: number
  /** Commits under way at once (default 1; see `Storage.concurrentWriters`). */
  writers?: number
  /** Writers wait for the end of the event loop's turn before taking a group (see `startWriter`). */
  gatherTurn?: boolean
}

interface Waiter<T> {
  item: T
  weight: number
  resolve(): void
  reject(err: unknown): void
}

const DEFAULT_MAX_GROUP = 64

/**
 * Group commit: items submitted while the writers are busy are committed together, in
 * submission order, by the next free writer; fewer, larger transactions rewrite the same hot
 * index pages far less often. Each submitter's promise resolves only after its item is
 * committed. A group that fails is retried item by item, so one bad item fails only itself;
 * a database that cannot be reached fails the group and every item waiting, at once (see `failAll`).
 * A submission that rejected was not committed, with one exception no client can avoid: a
 * connection lost during COMMIT leaves the outcome unknown (PostgreSQL may have committed).
 */
export class GroupCommit<T> {
  private readonly queue: Waiter<T>[] = []
  private queued = 0
  private writing = 0
  private starting = 0
  private readonly writers: number
  private readonly maxGroup: number

  constructor(private readonly options: GroupCommitOptions<T>) {
    this.writers = Math.max(1, options.writers ?? 1)
    this.maxGroup = options.maxGroup ?? DEFAULT_MAX_GROUP
  }

  /** Resolves once `item` is committed; rejects with the commit's error, or `whenFull()` when the queue is full. */
  submit(item: T, weight: number): Promise<void> {
    if (this.queued > 0 && this.queued + weight > this.options.maxQueued) return Promise.reject(this.options.whenFull())
    this.queued += weight
    return new Promise((resolve, reject) => {
      this.queue.push({ item, weight, resolve, reject })
      this.startWriter()
    })
  }

  /**
   * With `gatherTurn` a writer starts at the end of this turn of the event loop, not at once: on
   * SQLite a transaction runs synchronously, so one started at once would commit each request's
   * item alone before the next request of the same turn is even parsed. Waiting one turn lets
   * the items of every request that arrived together share one commit. Without it (PostgreSQL) a
   * writer starts at once: commits wait on the network, so groups form by themselves, and an item
   * waiting for a row lock keeps only its own group waiting.
   */
  private startWriter(): void {
    if (this.writing + this.starting >= this.writers) return
    if (!this.options.gatherTurn) return void this.writer()
    this.starting++
    setImmediate(() => {
      this.starting--
      void this.writer()
    })
  }

  /** One writer: commits groups from the queue until it is empty. */
  private async writer(): Promise<void> {
    this.writing++
    try {
      while (this.queue.length > 0) {
        const group = this.queue.splice(0, this.maxGroup)
        for (const { weight } of group) this.queued -= weight
        try {
          await this.options.commit(group.map((w) => w.item))
          for (const { resolve } of group) resolve()
        } catch (err) {
          if (group.length === 1 || isDependencyUnavailable(err)) this.failAll(group, err)
          else await this.commitOneByOne(group)
        }
      }
    } finally {
      this.writing--
    }
  }

  /** After a failed group: each item alone, so only a bad item fails; an outage fails the rest at once. */
  private async commitOneByOne(group: Waiter<T>[]): Promise<void> {
    for (let i = 0; i < group.length; i++) {
      const { item, resolve, reject } = group[i]!
      try {
        await this.options.commit([item])
        resolve()
      } catch (err) {
        if (isDependencyUnavailable(err)) return this.failAll(group.slice(i), err)
        reject(err)
      }
    }
  }

  /**
   * Fails every item of the group with `err`. When the database cannot be reached, the items
   * still waiting would only wait on it too: they fail now with the same error (503
   * `service_unavailable`, retry later), so an outage holds no memory and no submitter waits
   * out a connect time-out per group.
   */
  private failAll(group: Waiter<T>[], err: unknown): void {
    for (const { reject } of group) reject(err)
    if (!isDependencyUnavailable(err)) return
    const waiting = this.queue.splice(0)
    for (const { weight, reject } of waiting) {
      this.queued -= weight
      reject(err)
    }
  }
}
