import type { FleetEvent } from './fleet-event.js'
import type { EventBus, EventListener } from './event-bus.js'

/** One instance: publishing calls every listener of this process. */
export class InProcessEventBus implements EventBus {
  private readonly listeners = new Set<EventListener>()

  publish(event: FleetEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event)
      } catch {
        // One broken listener must not keep the event from the others.
      }
    }
  }

  subscribe(listener: EventListener): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  async close(): Promise<void> {
    this.listeners.clear()
  }
}
