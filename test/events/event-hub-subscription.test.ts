import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EventListener } from '../../src/events/event-bus.js'
import { InProcessEventBus } from '../../src/events/in-process-event-bus.js'
import type { FleetEvent } from '../../src/fleet-event.js'
import { startEventsApp, type EventsApp } from './events-kit.js'

/** The in-process bus, counting the subscriptions held on it. */
class CountingBus extends InProcessEventBus<FleetEvent> {
  held = 0
  override subscribe(listener: EventListener<FleetEvent>): () => void {
    const unsubscribe = super.subscribe(listener)
    this.held++
    let done = false
    return () => {
      if (done) return
      done = true
      this.held--
      unsubscribe()
    }
  }
}

describe('the event hub holds a bus subscription only while a stream is open', () => {
  const bus = new CountingBus()
  let t: EventsApp
  beforeAll(async () => {
    t = await startEventsApp('sqlite', {}, { eventBus: bus })
  })
  afterAll(() => t?.close())

  it('subscribes with the first stream, once for several, and unsubscribes when the last one ends', async () => {
    expect(bus.held).toBe(0)
    const first = await t.stream('root')
    const second = await t.stream('root')
    expect(bus.held).toBe(1)
    first.close()
    await expect.poll(() => t.app.inject({ method: 'GET', url: '/metrics' }).then((r) => /^fleetgate_event_streams (\d+)/m.exec(r.body)?.[1])).toBe('1')
    expect(bus.held).toBe(1)
    second.close()
    await expect.poll(() => bus.held).toBe(0)
    const again = await t.stream('root')
    expect(bus.held).toBe(1)
    again.close()
  })
})
