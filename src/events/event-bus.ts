import type { EventEnvelope } from './event-envelope.js'

export type EventListener<E> = (event: E) => void

/** What a feature that raises events needs: typed by the events it raises. */
export interface EventPublisher<E> {
  /** Announces an event; never throws and never waits (delivery is best effort). */
  publish(event: E): void
}

/**
 * Where state changes are announced and streams listen. One implementation per deployment:
 * in-process (one instance) or NATS (an event raised on any instance reaches every instance).
 * The bus knows nothing of the kinds it carries: the app gives it their union.
 */
export interface EventBus<E = EventEnvelope> extends EventPublisher<E> {
  /** Calls `listener` for every event published on any instance; returns the unsubscribe. */
  subscribe(listener: EventListener<E>): () => void
  /**
   * Resolves once events raised on any instance from now on reach the listeners subscribed so
   * far (NATS: the server confirmed the subscription; bounded while NATS is down).
   */
  listening(): Promise<void>
  close(): Promise<void>
}
