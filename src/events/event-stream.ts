import type { ServerResponse } from 'node:http'
import type { AuthUser } from '../auth/user-directory.js'
import type { StreamedEvent } from './event-envelope.js'

/** Each event's `data` is serialised once, however many streams write it. */
const serialised = new WeakMap<StreamedEvent, string>()
const dataOf = (event: StreamedEvent) => {
  let json = serialised.get(event)
  if (json === undefined) serialised.set(event, (json = JSON.stringify(event.data)))
  return json
}

/** Events held while a stream loads its user's bindings; beyond this the stream gives up. */
const MAX_PENDING = 10_000

export type EndReason = 'client' | 'token_expired' | 'slow_consumer' | 'shutdown'

export interface EventStreamSettings {
  user: AuthUser
  /** Only these devices' `device`, `device-status`, `platform-device` and `command` events; undefined: all. */
  deviceIds: ReadonlySet<string> | undefined
  maxBufferedBytes: number
  onEnd(stream: EventStream, reason: EndReason): void
}

/**
 * One open `GET /api/v1/events` response: decides what its user may see, numbers the events
 * it writes and drops itself when the client stops reading.
 */
export class EventStream {
  private nextId = 0
  private ended = false
  /** Devices bound to a non-admin user; null while loading (events wait in `pending`). */
  private bound: Set<string> | null = null
  private pending: StreamedEvent[] | null = []
  private readonly admin: boolean

  constructor(
    private readonly res: ServerResponse,
    private readonly settings: EventStreamSettings,
  ) {
    this.admin = settings.user.role === 'admin'
  }

  get isEnded(): boolean {
    return this.ended
  }

  get user(): AuthUser {
    return this.settings.user
  }

  /** The bindings are known: held events are delivered in order. */
  start(boundDeviceIds: Iterable<string>): void {
    this.bound = new Set(boundDeviceIds)
    const held = this.pending ?? []
    this.pending = null
    for (const event of held) this.offer(event)
  }

  offer(event: StreamedEvent): void {
    if (this.ended) return
    if (this.pending) {
      this.pending.push(event)
      if (this.pending.length > MAX_PENDING) this.end('slow_consumer')
      return
    }
    if (event.kind === 'binding' && !this.admin && event.data.username === this.user.username) {
      // Bindings change while the stream is open: from now on the device is (not) visible.
      if (event.data.bound) this.bound!.add(event.data.device_id)
      else this.bound!.delete(event.data.device_id)
    }
    if (!this.visible(event)) return
    this.write(`id: ${++this.nextId}\nevent: ${event.kind}\ndata: ${dataOf(event)}\n\n`)
  }

  comment(text: string): void {
    if (!this.ended && !this.pending) this.write(`: ${text}\n\n`)
  }

  /** Ends the response; with `shutdown` the connection closes too, so the server can stop. */
  end(reason: EndReason): void {
    if (this.ended) return
    this.ended = true
    this.settings.onEnd(this, reason)
    const socket = this.res.socket
    if (reason === 'slow_consumer') {
      // Whatever is still buffered would only grow: the connection goes now.
      this.res.destroy()
      return
    }
    if (reason === 'client') return
    if (reason === 'token_expired') this.res.write(': token expired\n\n')
    this.res.end(() => {
      if (reason === 'shutdown') socket?.destroySoon()
    })
  }

  private visible(event: StreamedEvent): boolean {
    const { deviceIds } = this.settings
    switch (event.kind) {
      case 'device':
      case 'device-status':
      case 'machine-state':
        if (deviceIds && !deviceIds.has(event.data.device_id)) return false
        return this.admin || this.bound!.has(event.data.device_id)
      case 'binding':
        return this.admin || event.data.username === this.user.username
      case 'platform-device':
      case 'command':
        if (deviceIds && !deviceIds.has(event.data.device_id)) return false
        return this.admin
      case 'release':
      case 'rollout':
      case 'rollout-device':
        return this.admin
    }
  }

  private write(chunk: string): void {
    this.res.write(chunk)
    if (this.res.writableLength > this.settings.maxBufferedBytes) this.end('slow_consumer')
  }
}
