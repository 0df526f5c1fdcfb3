import type { FastifyBaseLogger } from 'fastify'
import type { DeviceLink } from './device-link.js'
import type { LinkStore } from './link-store.js'

/**
 * Heartbeats update memory at once and the database at most every `flushMs` per device: a
 * fleet heartbeating every 15 s would otherwise turn into a write per frame. A closing link
 * and shutdown write at once.
 */
export class StatusWriter {
  private dirty = new Set<DeviceLink>()
  private readonly writes = new Set<Promise<void>>()
  private readonly timer: NodeJS.Timeout

  constructor(
    private readonly store: LinkStore,
    flushMs: number,
    private readonly log: FastifyBaseLogger,
  ) {
    this.timer = setInterval(() => this.flush(), flushMs)
    this.timer.unref()
  }

  mark(link: DeviceLink): void {
    this.dirty.add(link)
  }

  /** Writes every heartbeat not yet written. */
  flush(): Promise<void> {
    if (this.dirty.size === 0) return Promise.resolve()
    const links = [...this.dirty]
    this.dirty = new Set()
    return this.track(this.store.saveStatus(links), 'heartbeat flush')
  }

  /** The link closed: its final state is written now. */
  closed(link: DeviceLink): Promise<void> {
    this.dirty.delete(link)
    return this.track(this.store.linkClosed(link), `closing link of ${link.deviceId}`)
  }

  /** Flushes and waits for every write under way. */
  async drain(): Promise<void> {
    await this.flush()
    while (this.writes.size > 0) await Promise.all([...this.writes])
  }

  stop(): void {
    clearInterval(this.timer)
  }

  private track(write: Promise<void>, what: string): Promise<void> {
    const tracked = write.catch((err: unknown) => this.log.error({ err }, `device registry write failed (${what})`))
    this.writes.add(tracked)
    void tracked.finally(() => this.writes.delete(tracked))
    return tracked
  }
}
