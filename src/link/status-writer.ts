import type { FastifyBaseLogger } from 'fastify'
import type { DeviceLink } from './device-link.js'
import type { LinkStore } from './link-store.js'
import { CallBatcher } from '../lib/call-batcher.js'

/**
 * Closed links whose final write waits for the database, at most: beyond, the oldest is given
 * up (its record keeps naming this instance as holder until the device links again; presence
 * is decided by the live links, not by that column).
 */
export const MAX_UNWRITTEN_CLOSES = 10_000
const CLOSE_BATCHES = { maxBatch: 1000, concurrency: 2 }

/**
 * Heartbeats update memory at once and the database at most every `flushMs` per device: a
 * fleet heartbeating every 15 s would otherwise turn into a write per frame. A closing link
 * and shutdown write at once.
 *
 * A write that fails (the database is unreachable) is tried again with the next flush: the
 * heartbeats go back into the dirty set (one entry per open link, so memory stays bounded by
 * the links), and a closed link's final write waits in `unwrittenCloses` (bounded). Both
 * writes are conditional on the link still holding the record, so a late one never
 * overwrites a newer link's.
 */
export class StatusWriter {
  private dirty = new Set<DeviceLink>()
  private readonly unwrittenCloses = new Set<DeviceLink>()
  private readonly gone = new WeakSet<DeviceLink>()
  private readonly writes = new Set<Promise<void>>()
  /** Links closing together (an instance shutting down, a network cut) are written together. */
  private readonly closes: CallBatcher<DeviceLink, void>
  private timer: NodeJS.Timeout | undefined
  /** The periodic flush under way: a slow database must not pile flushes onto each other. */
  private periodic: Promise<void> | undefined

  constructor(
    private readonly store: LinkStore,
    private readonly flushMs: number,
    private readonly log: FastifyBaseLogger,
  ) {
    this.closes = new CallBatcher(async (links) => {
      await store.linksClosed(links)
      return links.map(() => undefined)
    }, CLOSE_BATCHES)
  }

  mark(link: DeviceLink): void {
    this.dirty.add(link)
  }

  /** Writes every heartbeat not yet written, and retries the closes that could not be written. */
  flush(): Promise<void> {
    const retried = [...this.unwrittenCloses].map((link) => this.writeClose(link))
    if (this.dirty.size === 0) return Promise.all(retried).then(() => undefined)
    const links = [...this.dirty]
    this.dirty = new Set()
    const saved = this.store.saveStatus(links).catch((err: unknown) => {
      for (const link of links) if (!this.gone.has(link)) this.dirty.add(link)
      throw err
    })
    return Promise.all([...retried, this.track(saved, 'heartbeat flush')]).then(() => undefined)
  }

  /** The link closed: its final state is written now (and again later, should that fail). */
  closed(link: DeviceLink): Promise<void> {
    this.gone.add(link)
    this.dirty.delete(link)
    return this.writeClose(link)
  }

  /** Flushes (one attempt per pending write) and waits for every write under way. */
  async drain(): Promise<void> {
    await this.flush()
    while (this.writes.size > 0) await Promise.all([...this.writes])
  }

  /** Starts the periodic flush of heartbeats. */
  start(): void {
    this.timer ??= setInterval(() => {
      this.periodic ??= this.flush().finally(() => (this.periodic = undefined))
    }, this.flushMs)
    this.timer.unref()
  }

  stop(): void {
    clearInterval(this.timer)
    this.timer = undefined
  }

  /** Closed links whose final write has not succeeded yet. */
  get pendingCloses(): number {
    return this.unwrittenCloses.size
  }

  private writeClose(link: DeviceLink): Promise<void> {
    this.unwrittenCloses.delete(link)
    const written = this.closes.call(link).catch((err: unknown) => {
      this.keepForRetry(link)
      throw err
    })
    return this.track(written, `closing link of ${link.deviceId}`)
  }

  private keepForRetry(link: DeviceLink): void {
    if (this.unwrittenCloses.size >= MAX_UNWRITTEN_CLOSES) {
      const oldest = this.unwrittenCloses.values().next().value!
      this.unwrittenCloses.delete(oldest)
      this.log.warn({ deviceId: oldest.deviceId }, `more than ${MAX_UNWRITTEN_CLOSES} closed links wait for the database; the oldest is given up`)
    }
    this.unwrittenCloses.add(link)
  }

  private track(write: Promise<void>, what: string): Promise<void> {
    const tracked = write.catch((err: unknown) => this.log.error({ err }, `device registry write failed (${what}); retried with the next flush`))
    this.writes.add(tracked)
    void tracked.finally(() => this.writes.delete(tracked))
    return tracked
  }
}
