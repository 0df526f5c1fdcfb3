import type { FleetEvent } from './fleet-event.js'

export type EventListener = (event: FleetEvent) => void

/**
 * Where state changes are announced and streams listen. One implementation per deployment:
 * in-process (one instance) or NATS (an event raised on any instance reaches every instance).
 */
export interface EventBus {
  /** Announces an event; never throws and never waits (delivery is best effort). */
  publish(event: FleetEvent): void
  /** Calls `listener` for every event published on any instance; returns the unsubscribe. */
  subscribe(listener: EventListener): () => void
  close(): Promise<void>
}
