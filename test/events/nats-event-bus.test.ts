import { connect } from 'nats'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createEventBus } from '../../src/events/create-event-bus.js'
import type { EventBus } from '../../src/events/event-bus.js'
import { EVENTS_SUBJECT, NatsEventBus } from '../../src/events/nats-event-bus.js'
import { isFleetEvent, type FleetEvent } from '../../src/fleet-event.js'
import { bindingEvent } from '../../src/gateway/devices/binding-event.js'
import { natsReachable, TEST_NATS_URL } from '../helpers/nats.js'

describe.skipIf(!(await natsReachable('the NATS event bus test')))('the NATS event bus', () => {
  let a: EventBus<FleetEvent>
  let b: EventBus<FleetEvent>
  const log = pino({ level: 'silent' })
  beforeAll(async () => {
    a = await createEventBus(TEST_NATS_URL, log, isFleetEvent)
    b = await createEventBus(TEST_NATS_URL, log, isFleetEvent)
  })
  afterAll(async () => {
    await a?.close()
    await b?.close()
  })

  it("delivers an instance's event to its own listeners once and to the other instance's", async () => {
    const onA: FleetEvent[] = []
    const onB: FleetEvent[] = []
    a.subscribe((e) => onA.push(e))
    b.subscribe((e) => onB.push(e))
    await b.listening()
    const event = bindingEvent('alice', `pnp-${Date.now()}`, true)
    a.publish(event)
    expect(onA).toEqual([event])
    await expect.poll(() => onB).toEqual([event])
    expect(onA).toHaveLength(1)
  })

  it('ignores a message on the subject that is not one of the kinds with its data', async () => {
    const received: FleetEvent[] = []
    b.subscribe((e) => received.push(e))
    await b.listening()
    const raw = await connect({ servers: TEST_NATS_URL })
    const device_id = `pnp-${Date.now()}`
    raw.publish(EVENTS_SUBJECT, JSON.stringify({ kind: 'rumour', data: { device_id } }))
    raw.publish(EVENTS_SUBJECT, JSON.stringify({ kind: 'binding', data: { device_id } }))
    raw.publish(EVENTS_SUBJECT, 'not json')
    const good = bindingEvent('bob', device_id, false)
    raw.publish(EVENTS_SUBJECT, JSON.stringify(good))
    await raw.drain()
    // Messages of one connection arrive in order: the malformed ones came before the good one.
    await expect.poll(() => received.length).toBeGreaterThan(0)
    expect(received).toEqual([good])
  })

  it('receives nothing while it has no listener, and what is raised once a listener subscribed', async () => {
    const nc = await connect({ servers: TEST_NATS_URL, noEcho: true })
    const quiet = new NatsEventBus<FleetEvent>(nc, log, isFleetEvent)
    const other = await connect({ servers: TEST_NATS_URL })
    const raise = async (event: FleetEvent) => {
      other.publish(EVENTS_SUBJECT, JSON.stringify(event))
      await other.flush()
    }
    try {
      const device_id = `pnp-${Date.now()}`
      // Raised while `quiet` has no listener: once the server routed it (the flush in `raise`) and
      // `quiet`'s connection made a round trip after that, it would have arrived, were it subscribed.
      await raise(bindingEvent('carol', device_id, true))
      await nc.flush()
      expect(quiet.received).toBe(0)

      const received: FleetEvent[] = []
      const unsubscribe = quiet.subscribe((e) => received.push(e))
      await quiet.listening()
      const later = bindingEvent('carol', device_id, false)
      await raise(later)
      await expect.poll(() => received).toEqual([later])

      unsubscribe()
      await nc.flush()
      await raise(bindingEvent('dave', device_id, true))
      await nc.flush()
      expect(quiet.received).toBe(1)
    } finally {
      await quiet.close()
      await other.close()
    }
  })
})

