import type { FastifyBaseLogger } from 'fastify'
import { Events, type NatsConnection, type Subscription } from 'nats'
import type { BindingRemoval, BindingRemovals, BindingWatcher } from './binding-removals.js'
import { InProcessBindingRemovals } from './in-process-binding-removals.js'
import { natsSubjects } from './nats-subjects.js'

/**
 * Several instances: a removal is told to this instance's watchers at once and published for
 * the others. The connection is the device bus's (it echoes), so each message names its sender.
 * The connection's owner closes it.
 */
export class NatsBindingRemovals implements BindingRemovals {
  private readonly local = new InProcessBindingRemovals()
  private readonly subscription: Subscription

  constructor(
    private readonly nc: NatsConnection,
    private readonly instanceId: string,
    private readonly log: FastifyBaseLogger,
  ) {
    this.subscription = nc.subscribe(natsSubjects.bindingsRemoved, {
      callback: (err, msg) => {
        if (err) return this.log.error({ err }, 'NATS binding removal subscription failed')
        const { from, removal } = msg.json<{ from: string; removal: BindingRemoval }>()
        if (from !== this.instanceId) this.local.announce(removal)
      },
    })
    void this.watchConnection()
  }

  announce(removal: BindingRemoval): void {
    this.local.announce(removal)
    if (!this.nc.isClosed()) this.nc.publish(natsSubjects.bindingsRemoved, JSON.stringify({ from: this.instanceId, removal }))
  }

  watch(watcher: BindingWatcher): void {
    this.local.watch(watcher)
  }

  async close(): Promise<void> {
    this.subscription.unsubscribe()
    this.local.setWatchersEnabled(false)
  }

  /** Removals published while this connection was down are lost: caches stay off until it is back. */
  private async watchConnection(): Promise<void> {
    for await (const status of this.nc.status()) {
      if (status.type === Events.Disconnect) this.local.setWatchersEnabled(false)
      else if (status.type === Events.Reconnect) this.local.setWatchersEnabled(true)
    }
  }
}
