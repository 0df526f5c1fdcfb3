import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DIALECTS, testDatabase, type TestDatabase } from '../helpers/dialects.js'
import { natsReachable, TEST_NATS_URL } from '../helpers/nats.js'
import { startGatewayApp, type GatewayApp } from '../gateway/helpers/gateway-app.js'
import { RawDevice, uniqueDeviceId } from '../gateway/helpers/raw-device.js'

const ROUNDS = 50

interface Contender {
  device: RawDevice
  /** Index of the instance the link went to. */
  via: number
  outcome: Promise<'registered' | number>
  closeCode?: number
}

/**
 * Opens one link per entry of `linkUrls` for the same device id, sends every register frame
 * in the same tick, and waits until all but one are closed. Returns the contenders.
 */
async function race(linkUrls: string[], deviceId: string): Promise<Contender[]> {
  const devices = await Promise.all(linkUrls.map((url) => RawDevice.open(url)))
  const contenders: Contender[] = devices.map((device, via) => {
    device.handler = () => ({ status: 200, data: { via } })
    const contender: Contender = {
      device,
      via,
      outcome: device.register({ device_id: deviceId }).then(
        () => 'registered' as const,
        () => -1,
      ),
    }
    void device.closed.then(({ code }) => (contender.closeCode = code))
    return contender
  })
  await Promise.all(contenders.map((c) => c.outcome))
  await expect.poll(() => contenders.filter((c) => c.closeCode !== undefined).length, { timeout: 15_000 }).toBe(linkUrls.length - 1)
  return contenders
}

async function proxiedVia(gw: GatewayApp, deviceId: string) {
  const res = await gw.app.inject({ method: 'GET', url: `/api/v1/devices/${deviceId}/hardware/position`, headers: { authorization: await gw.auth('root') } })
  return { status: res.statusCode, body: res.json() }
}

function expectOneWinner(contenders: Contender[]): Contender {
  const open = contenders.filter((c) => c.closeCode === undefined)
  expect(open).toHaveLength(1)
  expect(contenders.filter((c) => c.closeCode !== undefined).map((c) => c.closeCode)).toEqual(contenders.slice(1).map(() => 4409))
  expect(open[0]!.device.received.some((f) => f.type === 'registered')).toBe(true)
  return open[0]!
}

const clusterRunnable = DIALECTS.includes('postgres') && (await natsReachable('the split-brain race across instances'))

describe.skipIf(!clusterRunnable)('simultaneous links for one device id on three instances (PostgreSQL + NATS)', () => {
  let database: TestDatabase
  const instances: GatewayApp[] = []
  beforeAll(async () => {
    database = testDatabase('postgres')
    for (let i = 0; i < 3; i++) instances.push(await startGatewayApp('postgres', { NATS_URL: TEST_NATS_URL, DEVICE_REQUEST_TIMEOUT_MS: '3000' }, { database }))
  })
  afterAll(async () => {
    for (const gw of instances) await gw.close()
    await database?.cleanup()
  })

  it(`leaves exactly one link registered, closes the others with 4409 and routes every instance's requests to it (${ROUNDS} rounds)`, { timeout: 300_000 }, async () => {
    const winners = [0, 0, 0]
    for (let round = 0; round < ROUNDS; round++) {
      const deviceId = uniqueDeviceId('race')
      const contenders = await race(
        instances.map((gw) => gw.linkUrl),
        deviceId,
      )
      const winner = expectOneWinner(contenders)
      winners[winner.via]!++
      for (const gw of instances) expect(await proxiedVia(gw, deviceId)).toEqual({ status: 200, body: { success: true, status: 200, data: { via: winner.via } } })
      await winner.device.close()
    }
    console.log(`split-brain race: ${ROUNDS} rounds, one winner each; wins per instance ${winners.join(' / ')}`)
  })

  it('keeps one winner when a device that already holds a link races two new links', async () => {
    for (let round = 0; round < 10; round++) {
      const deviceId = uniqueDeviceId('race-held')
      const held = await RawDevice.link(instances[0]!.linkUrl, { device_id: deviceId })
      const contenders = await race([instances[1]!.linkUrl, instances[2]!.linkUrl], deviceId)
      expect((await held.closed).code).toBe(4409)
      const winner = expectOneWinner(contenders)
      for (const gw of instances) expect((await proxiedVia(gw, deviceId)).body.data).toEqual({ via: winner.via })
      await winner.device.close()
    }
  })
})

describe.each(DIALECTS)('simultaneous links for one device id on one instance (%s, in-process bus)', (dialect) => {
  let gw: GatewayApp
  beforeAll(async () => {
    gw = await startGatewayApp(dialect)
  })
  afterAll(() => gw?.close())

  it('leaves exactly one link registered and closes the others with 4409 (20 rounds)', { timeout: 120_000 }, async () => {
    for (let round = 0; round < 20; round++) {
      const deviceId = uniqueDeviceId('race-one')
      const contenders = await race([gw.linkUrl, gw.linkUrl, gw.linkUrl], deviceId)
      const winner = expectOneWinner(contenders)
      expect(await proxiedVia(gw, deviceId)).toEqual({ status: 200, body: { success: true, status: 200, data: { via: winner.via } } })
      await winner.device.close()
    }
  })
})
