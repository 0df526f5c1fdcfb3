import pino from 'pino'
import { Registry } from 'prom-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { InProcessDeviceBus } from '../../src/link/bus/in-process-device-bus.js'
import type { DeviceLink } from '../../src/link/device-link.js'
import type { RegisterFrame } from '@fleetgate/device-agent/protocol'
import { createLinkMetrics } from '../../src/link/link-metrics.js'
import { linkDefaults } from '../../src/link/link-options.js'
import { LinkRegistry } from '../../src/link/link-registry.js'
import { LinkServer } from '../../src/link/link-server.js'
import type { AdmitVerdict, LinkStore } from '../../src/link/link-store.js'
import { StatusWriter } from '../../src/link/status-writer.js'
import { DEVICE_KEY, RawDevice } from '../gateway/helpers/raw-device.js'
import { roundTrip } from './helpers/round-trip.js'
import { startSocketServer, type SocketServer } from './helpers/socket-server.js'

/** A registry that knows every device id and accepts no key. */
class RefusingStore implements LinkStore {
  async admitAll(frames: readonly RegisterFrame[]): Promise<AdmitVerdict[]> {
    return frames.map(() => 'wrong_key')
  }
  async claimAll(): Promise<(number | undefined)[]> {
    throw new Error('a refused device is never claimed')
  }
  async generations(): Promise<Map<string, number>> {
    return new Map()
  }
  async claimedWithin(): Promise<Map<string, number>> {
    return new Map()
  }
  async saveStatus(_links: readonly DeviceLink[]): Promise<void> {}
  async linksClosed(_links: readonly DeviceLink[]): Promise<void> {}
}

/** A bus whose release of a device id takes as long as the test wants. */
class HeldReleaseBus extends InProcessDeviceBus {
  readonly releases: { deviceId: string | undefined; finish(): void }[] = []

  // The in-process bus declares release() without the device id it is given.
  override release(deviceId?: string): Promise<void> {
    return new Promise((finish) => this.releases.push({ deviceId, finish }))
  }
}

describe('a refused registration', () => {
  const registry = new LinkRegistry()
  const bus = new HeldReleaseBus(registry, 60_000)
  const log = pino({ level: 'silent' })
  const store = new RefusingStore()
  const writer = new StatusWriter(store, 60_000, log)
  let server: LinkServer
  let sockets: SocketServer
  beforeAll(async () => {
    const metrics = createLinkMetrics(new Registry(), { linked: () => registry.size, inFlight: () => registry.inFlight() })
    server = new LinkServer({ store, bus, registry, writer, metrics, options: linkDefaults(), enrollToken: undefined, log })
    sockets = await startSocketServer((socket, wire) => server.accept(socket, wire))
  })
  afterAll(async () => {
    await server.shutdown()
    await sockets.close()
  })

  it('is closed only after this instance stopped answering for the device on the bus', async () => {
    const device = await RawDevice.open(sockets.url)
    device.send({ type: 'register', device_id: 'pnp-refused', key: DEVICE_KEY, hostname: 'h', version: '1' })
    await expect.poll(() => bus.releases.map((r) => r.deviceId)).toEqual(['pnp-refused'])

    expect(await roundTrip(device)).toBe('pong')

    bus.releases[0]!.finish()
    expect(await device.closed).toEqual({ code: 4401, reason: 'wrong key for this device id' })
  })
})
