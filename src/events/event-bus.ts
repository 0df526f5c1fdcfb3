import type { EventEnvelope } from './event-envelope.js'

export type EventListener<E> = (event: E) => void

/** What a feature that raises events needs: typed by the events it raises. */
export interface EventPublisher<E> {
  /** Announces an event; never throws and never waits (delivery is best effort). */
  publish(event: E): void
}

/**
 * Notices every instance must hear at once, whether or not it has open streams (a session ended
 * by logout): unlike events, which an instance receives only while it has a stream.
 */
export interface BroadcastChannel {
  /**
   * Reaches the listeners of every other instance (NATS; nothing on one instance). Resolves once
   * the NATS server has the message (a round trip, bounded); never rejects.
   */
  send(message: string): Promise<void>
  /** Calls `listener` with each message another instance sent; returns the unsubscribe. */
  listen(listener: (message: string) => void): () => void
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
  /** The channel `name` (one subscription per channel, held from the first `listen` until `close`). */
  broadcast(name: string): BroadcastChannel
  close(): Promise<void>
}
