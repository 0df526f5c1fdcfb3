import { Events, type NatsConnection } from 'nats'

/**
 * Whether a NATS connection is up right now, read from its status events. While the server
 * cannot be reached the client keeps reconnecting (once a second, see `connectNats`) and
 * buffers what is published meanwhile; a caller that must not wait for that (a forwarded
 * request) asks `connected` first.
 */
export class NatsConnectionWatch {
  private up = true
  private reconnectedAt = Number.NEGATIVE_INFINITY
  private readonly listeners: ((connected: boolean) => void)[] = []

  /** `nc` must be connected (as `connectNats` resolves it). */
  constructor(private readonly nc: NatsConnection) {
    void this.watch()
  }

  /** True while the connection is up (false while the client reconnects, and once closed). */
  get connected(): boolean {
    return this.up && !this.nc.isClosed()
  }

  /** True when the connection came back less than `ms` ago. */
  reconnectedWithin(ms: number, now = performance.now()): boolean {
    return now - this.reconnectedAt < ms
  }

  /** Called on every change: false when the connection is lost, true when it is back. */
  onChange(listener: (connected: boolean) => void): void {
    this.listeners.push(listener)
  }

  private async watch(): Promise<void> {
    for await (const status of this.nc.status()) {
      if (status.type === Events.Disconnect) this.set(false)
      else if (status.type === Events.Reconnect) {
        this.reconnectedAt = performance.now()
        this.set(true)
      }
    }
    this.set(false)
  }

  private set(up: boolean): void {
    if (this.up === up) return
    this.up = up
    for (const listener of this.listeners) listener(up)
  }
}
