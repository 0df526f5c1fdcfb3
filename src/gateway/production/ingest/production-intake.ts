import type { FastifyBaseLogger } from 'fastify'
import { CLOSE_CODES, sendBatched, type ProductionAckFrame, type ProductionFrame } from '@fleetgate/device-agent/protocol'
import type { EventPublisher } from '../../../events/event-bus.js'
import type { DeviceLink } from '../../../link/device-link.js'
import type { ProductionReceiver } from '../../../link/production-receiver.js'
import type { MachineStateEvent } from './machine-state-event.js'
import type { ProductionMetrics } from './production-metrics.js'
import { ProductionBacklogFull, type ProductionStore, type StoredFrame } from './production-store.js'
import type { CurrentState } from './state-sequence.js'

/** Production frames a link may have unacknowledged; at this many the gateway stops reading it (§16 flow control). */
export const MAX_UNACKED_FRAMES = 64

/** One link's frames, acknowledged one after another in arrival order. */
interface LinkQueue {
  tail: Promise<void>
  unacked: number
  paused: boolean
}

/**
 * The gateway's end of production reporting on the device link: each frame's events are stored
 * (one transaction, see `ProductionStore`) and acknowledged only then, in arrival order per link.
 * A frame goes to the store as it arrives, not after the link's frame before it: a link's frames
 * then share commits (a group of many machines' frames, each of several frames, costs little
 * more than one of one frame each), and the order they commit in does not matter (figures go by
 * `ts`, ids are stored once).
 * At `MAX_UNACKED_FRAMES` frames not yet acknowledged the link's socket stops being read (ws
 * `pause()`), so a machine sending faster than the database stores waits instead of growing
 * memory; reading resumes as the acknowledgements go out. A frame that could not be stored (the
 * database failed) closes the link with 1011, or 1013 when too many events wait for the database
 * on this instance: the machine links again and resends what was not acknowledged. A closed link makes its machine `offline`, after its frames.
 */
export class ProductionIntake implements ProductionReceiver {
  private readonly queues = new WeakMap<DeviceLink, LinkQueue>()
  private readonly work = new Set<Promise<void>>()

  constructor(
    private readonly store: Pick<ProductionStore, 'storeFrame' | 'linkClosed'>,
    private readonly metrics: ProductionMetrics,
    private readonly events: EventPublisher<MachineStateEvent>,
    private readonly log: FastifyBaseLogger,
    private readonly maxUnacked = MAX_UNACKED_FRAMES,
  ) {}

  receive(link: DeviceLink, frame: ProductionFrame): void {
    const queue = this.queueOf(link)
    queue.unacked++
    if (queue.unacked >= this.maxUnacked && !queue.paused) {
      queue.paused = true
      link.socket.pause()
    }
    const arrived = performance.now()
    // Stored as soon as it arrives (with the frames of other links, and this link's, that wait
    // for the same commit); acknowledged in arrival order.
    const stored = this.store.storeFrame(link.deviceId, frame.events)
    stored.catch(() => undefined)
    this.enqueue(queue, async () => {
      try {
        await this.acknowledge(link, stored, arrived)
      } finally {
        queue.unacked--
        if (queue.paused && queue.unacked < this.maxUnacked) {
          queue.paused = false
          link.socket.resume()
        }
      }
    })
  }

  closed(link: DeviceLink): void {
    this.enqueue(this.queueOf(link), async () => {
      try {
        this.announce(link.deviceId, await this.store.linkClosed(link.deviceId, link.generation))
      } catch (err) {
        this.log.error({ err, deviceId: link.deviceId }, 'recording a closed link as offline failed')
      }
    })
  }

  /** Frames not yet acknowledged on `link` (tests, flow control). */
  unacked(link: DeviceLink): number {
    return this.queues.get(link)?.unacked ?? 0
  }

  /** Resolves once every frame and close taken so far is stored (or failed): before storage closes. */
  async settled(): Promise<void> {
    while (this.work.size > 0) await Promise.all([...this.work])
  }

  private async acknowledge(link: DeviceLink, storing: Promise<StoredFrame>, arrived: number): Promise<void> {
    let stored
    try {
      stored = await storing
    } catch (err) {
      const full = err instanceof ProductionBacklogFull
      this.log[full ? 'warn' : 'error']({ err, deviceId: link.deviceId }, 'storing production events failed; closing the link so the machine resends them')
      if (link.state === 'open') {
        if (full) link.close(CLOSE_CODES.try_again, 'too many production events wait to be stored; link again later and resend')
        else link.close(CLOSE_CODES.internal, 'production events could not be stored; link again and resend')
      }
      return
    }
    this.metrics.accepted.inc(stored.inserted)
    if (stored.rejected.length > 0) this.metrics.rejected.inc(stored.rejected.length)
    this.announce(link.deviceId, stored.changed)
    if (link.state !== 'open') return
    const ack: ProductionAckFrame = { type: 'production-ack', ids: stored.ids, rejected: stored.rejected }
    link.messagesSent++
    sendBatched(link.socket, link.wire, JSON.stringify(ack), () => undefined)
    this.metrics.ackLatency.observe((performance.now() - arrived) / 1000)
  }

  private announce(deviceId: string, state: CurrentState | undefined): void {
    if (state) this.events.publish({ kind: 'machine-state', data: { device_id: deviceId, state: state.state, reason: state.reason, at: state.since } })
  }

  private queueOf(link: DeviceLink): LinkQueue {
    let queue = this.queues.get(link)
    if (!queue) this.queues.set(link, (queue = { tail: Promise.resolve(), unacked: 0, paused: false }))
    return queue
  }

  private enqueue(queue: LinkQueue, step: () => Promise<void>): void {
    const next = queue.tail.then(step)
    queue.tail = next
    this.work.add(next)
    void next.finally(() => this.work.delete(next))
  }
}
