import { connect } from 'nats'
import { pino } from 'pino'
import { Registry } from 'prom-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createEventBus } from '../../src/events/create-event-bus.js'
import type { EventBus } from '../../src/events/event-bus.js'
import { EVENTS_SUBJECT } from '../../src/events/nats-event-bus.js'
import { isFleetEvent, type FleetEvent } from '../../src/fleet-event.js'
import { bindingEvent } from '../../src/gateway/devices/binding-event.js'
import { natsReachable, TEST_NATS_URL } from '../helpers/nats.js'

const KEY = 'event-bus-test-cluster-key-0123456789'

describe.skipIf(!(await natsReachable('the signed NATS event bus test')))('the NATS event bus with a cluster key', () => {
  let a: EventBus<FleetEvent>
  let b: EventBus<FleetEvent>
  let other: EventBus<FleetEvent>
  const registry = new Registry()
  const log = pino({ level: 'silent' })
  beforeAll(async () => {
    a = await createEventBus({ url: TEST_NATS_URL, clusterKey: KEY }, log, isFleetEvent)
    b = await createEventBus({ url: TEST_NATS_URL, clusterKey: KEY }, log, isFleetEvent, registry)
    // It never hears the others' announcements (signed with another key): it publishes only in
    // its start-up grace, two announcement periods, made long enough to outlast the suite.
    other = await createEventBus({ url: TEST_NATS_URL, clusterKey: KEY.replace('0', 'X') }, log, isFleetEvent, undefined, { periodMs: 600_000 })
  })
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close(), other?.close()])
  })

  it("delivers an instance's signed events and ignores one published without the key or with another key, counting them", async () => {
    const received: FleetEvent[] = []
    b.subscribe((e) => received.push(e))
    await b.listening()
    const device_id = `pnp-signed-${Date.now()}`
    const raw = await connect({ servers: TEST_NATS_URL })
    raw.publish(EVENTS_SUBJECT, JSON.stringify(bindingEvent('mallory', device_id, true)))
    await raw.drain()
    other.publish(bindingEvent('eve', device_id, true))
    await new Promise((r) => setTimeout(r, 50))
    const good = bindingEvent('alice', device_id, true)
    a.publish(good)
    await expect.poll(() => received.length).toBeGreaterThan(0)
    expect(received).toEqual([good])
    // At least: other tests sharing this NATS may publish unsigned events meanwhile.
    const metrics = await registry.metrics()
    const count = (reason: string) => Number(new RegExp(`fleetgate_bus_rejected_messages_total\\{reason="${reason}"\\} (\\d+)`).exec(metrics)?.[1] ?? 0)
    expect(count('unsigned')).toBeGreaterThanOrEqual(1)
    expect(count('bad_signature')).toBeGreaterThanOrEqual(1)
  })
})
