import type { QueryClient } from '@tanstack/react-query'
import { machineKeys } from '../api/query-keys'
import { routeEvent } from './event-router'
import { openEventStream, type EventStreamHandlers } from './event-stream'
import { machineListsMissedEvents } from './machine-events'

/** What the header's `role="status"` says (contract §12): the stream is open, or it is not. */
export type LiveStatus = 'live' | 'reconnecting'

export type OpenStream = (token: string, handlers: EventStreamHandlers) => () => void

/**
 * The tab's one event stream and its status, an external store (read with useSyncExternalStore).
 * It outlives a token: a refresh restarts the stream with the new token, and any open after the
 * first one (a reconnect, or that restart) refetches what the gap may have hidden, once.
 */
export class LiveConnection {
  private status: LiveStatus = 'reconnecting'
  private openedBefore = false
  private stopStream: (() => void) | undefined
  private readonly listeners = new Set<() => void>()

  constructor(
    private readonly client: QueryClient,
    private readonly onUnauthorized: () => void,
    private readonly open: OpenStream = openEventStream,
  ) {}

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  getSnapshot = (): LiveStatus => this.status

  /** Opens the stream with `token`, replacing the one open (a token refresh). */
  connect(token: string): void {
    this.stopStream?.()
    this.stopStream = this.open(token, {
      onEvent: (event) => routeEvent(this.client, event),
      onOpen: () => {
        if (this.openedBefore) refetchAfterGap(this.client)
        this.openedBefore = true
        this.set('live')
      },
      onDown: () => this.set('reconnecting'),
      onUnauthorized: () => {
        this.set('reconnecting')
        this.onUnauthorized()
      },
    })
  }

  /** Closes the stream (the token is being replaced, or the user signed out). */
  disconnect(): void {
    this.stopStream?.()
    this.stopStream = undefined
  }

  /** Signed out: the next sign-in's first open is a first open, not a reconnect. */
  forget(): void {
    this.disconnect()
    this.openedBefore = false
    this.set('reconnecting')
  }

  private set(status: LiveStatus): void {
    if (status === this.status) return
    this.status = status
    for (const listener of this.listeners) listener()
  }
}

/**
 * Events raised while no stream was open are lost (the server keeps none): every live query shown
 * refetches once. A fetch already under way is not cancelled (it would only start again); the
 * machine lists go through their own throttle, which refetches after any fetch in flight.
 */
export function refetchAfterGap(client: QueryClient): void {
  const lists = machineKeys.lists()
  void client.invalidateQueries(
    { type: 'active', predicate: (query) => !lists.every((part, i) => query.queryKey[i] === part) },
    { cancelRefetch: false },
  )
  machineListsMissedEvents(client)
}
