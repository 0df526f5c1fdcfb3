import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DIALECTS } from '../helpers/dialects.js'
import { startGatewayApp, type GatewayApp } from '../gateway/helpers/gateway-app.js'
import { DEVICE_KEY, RawDevice, uniqueDeviceId } from '../gateway/helpers/raw-device.js'
import { streamOversizeFrame } from './helpers/oversize-frame.js'

const KiB = 1024

describe.each(DIALECTS)('device link limits before and around registration on %s', (dialect) => {
  let gw: GatewayApp
  beforeAll(async () => {
    gw = await startGatewayApp(dialect, {}, { deviceLink: { maxAwaitingRegister: 5 } })
  })
  afterAll(() => gw.close())

  const getDevice = async (id: string) =>
    (await gw.app.inject({ method: 'GET', url: `/api/v1/devices/${id}`, headers: { authorization: await gw.auth('root') } })).json().device

  it('closes one socket more than the configured number awaiting register with 1013; a slot frees once one registers', async () => {
    const waiting = await Promise.all(Array.from({ length: 5 }, () => RawDevice.open(gw.linkUrl)))
    const extra = await RawDevice.open(gw.linkUrl)
    expect((await extra.closed).code).toBe(1013)
    await waiting[0]!.register({ device_id: uniqueDeviceId('pnp-slot') })
    const next = await RawDevice.open(gw.linkUrl)
    await expect(next.register({ device_id: uniqueDeviceId('pnp-slot') })).resolves.toMatchObject({ type: 'registered' })
    for (const socket of [...waiting, next]) await socket.close()
  })

  it('reads no more than 64 KiB of a frame from a socket it refused with 1013', async () => {
    const waiting = await Promise.all(Array.from({ length: 5 }, () => RawDevice.open(gw.linkUrl)))
    const outcome = await streamOversizeFrame(gw.linkUrl, 16 * 1024 * KiB)
    expect(outcome.payloadWritten).toBeLessThan(1024 * KiB)
    expect(outcome.closeCode).toBe(1013)
    for (const socket of waiting) await socket.close()
  })

  it('closes a frame over 64 KiB before registration with 1009, even a register frame', async () => {
    const device = await RawDevice.open(gw.linkUrl)
    device.send({ type: 'register', device_id: uniqueDeviceId(), key: DEVICE_KEY, hostname: 'h'.repeat(65 * KiB), version: '1' })
    expect((await device.closed).code).toBe(1009)
  })

  it('closes a frame announcing 16 MiB before registration with 1009 once 64 KiB of it arrived, not once all of it did', async () => {
    const outcome = await streamOversizeFrame(gw.linkUrl, 16 * 1024 * KiB)
    expect(outcome.payloadWritten).toBeLessThan(1024 * KiB)
    expect(outcome.closeCode).toBe(1009)
    expect(outcome.cutOff).toBe(true)
  })

  it('still judges a frame of 64 KiB before registration by its content (4400, not 1009)', async () => {
    const device = await RawDevice.open(gw.linkUrl)
    const frame = JSON.stringify({ type: 'heartbeat', status: { pad: '' } })
    device.send(frame.replace('"pad":""', `"pad":"${'x'.repeat(64 * KiB - frame.length)}"`))
    expect((await device.closed).code).toBe(4400)
  })

  it('accepts large frames once registered', async () => {
    const id = uniqueDeviceId('pnp-big')
    const device = await RawDevice.link(gw.linkUrl, { device_id: id })
    device.heartbeat({ notes: 'n'.repeat(60 * KiB) })
    await expect.poll(async () => ((await getDevice(id)).last_status as { notes?: string } | null)?.notes?.length).toBe(60 * KiB)
    device.respond('unknown-id', 200, { blob: 'b'.repeat(200 * KiB) })
    device.heartbeat({ after: true })
    await expect.poll(async () => (await getDevice(id)).last_status).toEqual({ after: true })
    expect(device.socket.readyState).toBe(device.socket.OPEN)
    await device.close()
  })

  it('closes a link whose heartbeat status is over 64 KiB of JSON with 4400, not storing it', async () => {
    const id = uniqueDeviceId('pnp-status')
    const device = await RawDevice.link(gw.linkUrl, { device_id: id })
    device.heartbeat({ notes: 'n'.repeat(65 * KiB) })
    expect((await device.closed).code).toBe(4400)
    expect((await getDevice(id)).last_status?.notes).toBeUndefined()
  })
})

describe('device link default limit of sockets awaiting register', () => {
  let gw: GatewayApp
  beforeAll(async () => {
    gw = await startGatewayApp(DIALECTS[0]!)
  })
  afterAll(() => gw.close())

  it('keeps 1,000 unregistered sockets open and closes the 1,001st with 1013', async () => {
    const waiting: RawDevice[] = []
    for (let i = 0; i < 1000; i += 100) waiting.push(...(await Promise.all(Array.from({ length: 100 }, () => RawDevice.open(gw.linkUrl)))))
    const extra = await RawDevice.open(gw.linkUrl)
    expect((await extra.closed).code).toBe(1013)
    expect(waiting.every((d) => d.socket.readyState === d.socket.OPEN)).toBe(true)
    await Promise.all(waiting.map((d) => d.close()))
  }, 60_000)
})
