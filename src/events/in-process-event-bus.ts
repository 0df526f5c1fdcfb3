import type { EventEnvelope } from './event-envelope.js'
import type { BroadcastChannel, EventBus, EventListener } from './event-bus.js'

/** One instance: publishing calls every listener of this process. */
export class InProcessEventBus<E = EventEnvelope> implements EventBus<E> {
  private readonly listeners = new Set<EventListener<E>>()

  publish(event: E): void {
    for (const listener of this.listeners) {
      try {
        listener(event)
      } catch {
        // One broken listener must not keep the event from the others.
      }
    }
  }

  subscribe(listener: EventListener<E>): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  async listening(): Promise<void> {}

  /** One instance: there is no other instance to reach. */
  broadcast(): BroadcastChannel {
    return { send: async () => {}, listen: () => () => {} }
  }

  async close(): Promise<void> {
    this.listeners.clear()
  }
}
