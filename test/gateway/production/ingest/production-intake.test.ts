import pino from 'pino'
import { Registry } from 'prom-client'
import { describe, expect, it } from 'vitest'
import type { ProductionFrame } from '@fleetgate/device-agent/protocol'
import type { DeviceLink } from '../../../../src/link/device-link.js'
import { MAX_UNACKED_FRAMES, ProductionIntake } from '../../../../src/gateway/production/ingest/production-intake.js'
import { createProductionMetrics } from '../../../../src/gateway/production/ingest/production-metrics.js'
import type { StoredFrame } from '../../../../src/gateway/production/ingest/production-store.js'

/** A link whose socket records pauses, resumes and what is sent. */
function fakeLink() {
  const calls: string[] = []
  const sent: { ids: string[] }[] = []
  const link = {
    deviceId: 'pnp-flow',
    generation: 1,
    state: 'open',
    messagesSent: 0,
    wire: undefined,
    socket: {
      pause: () => calls.push('pause'),
      resume: () => calls.push('resume'),
      send: (text: string, done: () => void) => {
        sent.push(JSON.parse(text))
        done()
      },
    },
    close: (code: number) => calls.push(`close ${code}`),
  }
  return { link: link as unknown as DeviceLink, calls, sent }
}

/** A store whose frames complete only when the test lets them. */
function gatedStore() {
  const gates: (() => void)[] = []
  let running = 0
  let mostAtOnce = 0
  return {
    gates,
    mostAtOnce: () => mostAtOnce,
    store: {
      async storeFrame(_deviceId: string, events: ProductionFrame['events']): Promise<StoredFrame> {
        running++
        mostAtOnce = Math.max(mostAtOnce, running)
        await new Promise<void>((resolve) => gates.push(resolve))
        running--
        if (events[0]!.id === 'fail') throw new Error('database down')
        return { ids: events.map((e) => e.id), rejected: [], inserted: events.length }
      },
      linkClosed: async () => undefined,
    },
  }
}

const frame = (id: string): ProductionFrame => ({ type: 'production', events: [{ id }] })
const settle = () => new Promise((resolve) => setImmediate(resolve))

describe('production flow control (§16)', () => {
  it(`stops reading a link at ${MAX_UNACKED_FRAMES} unacknowledged frames and reads again as acknowledgements go out`, async () => {
    const { link, calls, sent } = fakeLink()
    const gated = gatedStore()
    const intake = new ProductionIntake(gated.store, createProductionMetrics(new Registry()), { publish: () => undefined }, pino({ level: 'silent' }))
    for (let i = 0; i < MAX_UNACKED_FRAMES - 1; i++) intake.receive(link, frame(`f${i}`))
    expect(calls).toEqual([])
    intake.receive(link, frame(`f${MAX_UNACKED_FRAMES - 1}`))
    expect(calls).toEqual(['pause'])
    // Frames ws had already read still come in while paused: they wait, and no second pause is needed.
    for (let i = MAX_UNACKED_FRAMES; i < MAX_UNACKED_FRAMES + 6; i++) intake.receive(link, frame(`f${i}`))
    expect(calls).toEqual(['pause'])
    expect(intake.unacked(link)).toBe(MAX_UNACKED_FRAMES + 6)

    // A link's frames all wait for the database at once (they may share a commit); acknowledgements go out in arrival order.
    while (sent.length < MAX_UNACKED_FRAMES + 6) {
      await settle()
      gated.gates.shift()?.()
      await settle()
      if (sent.length === 6) expect(calls).toEqual(['pause'])
      if (sent.length === 7) expect(calls).toEqual(['pause', 'resume'])
    }
    await intake.settled()
    expect(gated.mostAtOnce()).toBe(MAX_UNACKED_FRAMES + 6)
    expect(sent.map((a) => a.ids[0])).toEqual(Array.from({ length: MAX_UNACKED_FRAMES + 6 }, (_, i) => `f${i}`))
    expect(calls).toEqual(['pause', 'resume'])
    expect(intake.unacked(link)).toBe(0)
  })

  it('acknowledges a link’s frames in arrival order when later ones are stored first, and records the closed link after them', async () => {
    const { link, sent } = fakeLink()
    const gated = gatedStore()
    const order: string[] = []
    let closedAfter: string | undefined
    const store = { ...gated.store, linkClosed: async () => void (closedAfter = sent.map((a) => a.ids[0]).join(' ')) }
    const intake = new ProductionIntake(store, createProductionMetrics(new Registry()), { publish: () => undefined }, pino({ level: 'silent' }))
    for (let i = 0; i < 5; i++) intake.receive(link, frame(`f${i}`))
    intake.closed(link)
    await settle()
    expect(gated.gates).toHaveLength(5)
    for (const i of [4, 2, 3, 0, 1]) {
      gated.gates[i]!()
      await settle()
      order.push(`stored f${i}, acknowledged ${sent.map((a) => a.ids[0]).join(' ')}`)
    }
    await intake.settled()
    expect(order).toEqual(['stored f4, acknowledged ', 'stored f2, acknowledged ', 'stored f3, acknowledged ', 'stored f0, acknowledged f0', 'stored f1, acknowledged f0 f1 f2 f3 f4'])
    expect(closedAfter).toBe('f0 f1 f2 f3 f4')
    expect(intake.unacked(link)).toBe(0)
  })

  it('closes the link with 1011 when a frame cannot be stored, acknowledging nothing of it', async () => {
    const { link, calls, sent } = fakeLink()
    const gated = gatedStore()
    const intake = new ProductionIntake(gated.store, createProductionMetrics(new Registry()), { publish: () => undefined }, pino({ level: 'silent' }))
    intake.receive(link, frame('fail'))
    await settle()
    gated.gates.shift()!()
    await intake.settled()
    expect(sent).toEqual([])
    expect(calls).toEqual(['close 1011'])
    expect(intake.unacked(link)).toBe(0)
  })
})
