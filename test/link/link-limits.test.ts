import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DIALECTS } from '../helpers/dialects.js'
import { startGatewayApp, type GatewayApp } from '../gateway/helpers/gateway-app.js'
import { DEVICE_KEY, RawDevice, uniqueDeviceId } from '../gateway/helpers/raw-device.js'
import { streamOversizeFrame } from './helpers/oversize-frame.js'
import { linkCapacity, RESERVED_DESCRIPTORS } from '../../src/link/link-options.js'

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
    // 100 from each of 10 addresses: the per-address default lets each address have them all.
    for (let i = 0; i < 10; i++) waiting.push(...(await Promise.all(Array.from({ length: 100 }, () => RawDevice.open(gw.linkUrl, { localAddress: `127.0.0.${10 + i}` })))))
    const extra = await RawDevice.open(gw.linkUrl, { localAddress: '127.0.0.30' })
    expect(await extra.closed).toMatchObject({ code: 1013, reason: 'too many links awaiting registration; try again later' })
    expect(waiting.every((d) => d.socket.readyState === d.socket.OPEN)).toBe(true)
    await Promise.all(waiting.map((d) => d.close()))
  }, 60_000)
})

describe.each(DIALECTS)('device link capacity of an instance on %s', (dialect) => {
  let gw: GatewayApp
  beforeAll(async () => {
    gw = await startGatewayApp(dialect, {}, { deviceLink: { maxLinks: 3 } })
  })
  afterAll(() => gw.close())

  const refusals = async () => Number(/^fleetgate_device_link_refusals_total\{reason="capacity"\} (\d+)/m.exec((await gw.app.inject({ method: 'GET', url: '/metrics' })).body)?.[1] ?? 0)

  it('closes a link past its capacity with 1013 at once, keeps the held ones and its API, and takes a link again once one closed', async () => {
    const held = [await RawDevice.link(gw.linkUrl, { device_id: uniqueDeviceId('pnp-cap') }), await RawDevice.link(gw.linkUrl, { device_id: uniqueDeviceId('pnp-cap') })]
    // One awaiting its register frame counts too.
    const awaiting = await RawDevice.open(gw.linkUrl)
    const extra = await RawDevice.open(gw.linkUrl)
    expect(await extra.closed).toMatchObject({ code: 1013, reason: 'this instance holds all the links it can; try again later' })
    expect(await refusals()).toBe(1)
    expect([...held, awaiting].every((d) => d.socket.readyState === d.socket.OPEN)).toBe(true)
    const list = await fetch(`${gw.url}/api/v1/devices`, { headers: { authorization: await gw.auth('root') } })
    expect(list.status).toBe(200)
    await held[0]!.close()
    await expect.poll(async () => (await gw.app.inject({ method: 'GET', url: '/metrics' })).body.match(/^fleetgate_device_links (\d+)/m)?.[1]).toBe('1')
    const next = await RawDevice.link(gw.linkUrl, { device_id: uniqueDeviceId('pnp-cap') })
    expect(next.socket.readyState).toBe(next.socket.OPEN)
    for (const d of [held[1]!, awaiting, next]) await d.close()
  })
  it('cuts off a refused socket whose peer never answers the close frame, rather than holding its descriptor for ws\'s 30 s', async () => {
    const held = await Promise.all([1, 2, 3].map(() => RawDevice.link(gw.linkUrl, { device_id: uniqueDeviceId('pnp-cap-full') })))
    const url = new URL(gw.linkUrl)
    const raw = connect({ port: Number(url.port), host: url.hostname })
    raw.on('error', () => undefined)
    let received = Buffer.alloc(0)
    raw.on('data', (chunk: Buffer) => (received = Buffer.concat([received, chunk])))
    await once(raw, 'connect')
    raw.write(`GET ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`)
    // The peer reads the close frame and says nothing: the server ends the connection on its own.
    await once(raw, 'close')
    const frame = received.subarray(received.indexOf('\r\n\r\n') + 4)
    expect(frame[0]).toBe(0x88)
    expect(frame.readUInt16BE(2)).toBe(1013)
    for (const d of held) await d.close()
  }, 10_000)
})

describe('link capacity from the open-file limit', () => {
  const limits = (soft: string, hard: string) =>
    `Limit                     Soft Limit           Hard Limit           Units     \nMax processes             unlimited            unlimited            processes \nMax open files            ${soft.padEnd(20)} ${hard.padEnd(20)} files     \n`

  it('is the soft limit less the reserved descriptors', () => {
    expect(linkCapacity(limits('20000', '20000'))).toBe(20000 - RESERVED_DESCRIPTORS)
    expect(linkCapacity(limits('1024', '65536'), 24)).toBe(1000)
  })

  it('is unbounded when no limit can be read, and at least one link under a tiny limit', () => {
    expect(linkCapacity(undefined)).toBe(Infinity)
    expect(linkCapacity(limits('unlimited', 'unlimited'))).toBe(Infinity)
    expect(linkCapacity(limits('100', '100'))).toBe(1)
  })
})

describe.each(DIALECTS)('the per-address limit on sockets awaiting register on %s', (dialect) => {
  let gw: GatewayApp
  beforeAll(async () => {
    gw = await startGatewayApp(dialect, { TRUST_PROXY: '127.0.0.3' }, { deviceLink: { maxAwaitingPerAddress: 3 } })
  })
  afterAll(() => gw.close())

  const refusals = async () => {
    const text = (await gw.app.inject({ method: 'GET', url: '/metrics' })).body
    return Number(/^fleetgate_device_link_refusals_total\{reason="awaiting_address"\} (\d+)$/m.exec(text)?.[1] ?? 0)
  }

  it('closes one socket more than the limit from one address with 1013, counted; another address still registers', async () => {
    const before = await refusals()
    const waiting = await Promise.all(Array.from({ length: 3 }, () => RawDevice.open(gw.linkUrl, { localAddress: '127.0.0.1' })))
    const extra = await RawDevice.open(gw.linkUrl, { localAddress: '127.0.0.1' })
    expect((await extra.closed).code).toBe(1013)
    expect(await refusals()).toBe(before + 1)
    const elsewhere = await RawDevice.open(gw.linkUrl, { localAddress: '127.0.0.2' })
    await expect(elsewhere.register({ device_id: uniqueDeviceId('pnp-addr') })).resolves.toMatchObject({ type: 'registered' })
    // A slot of the first address frees once one of its sockets registers.
    await waiting[0]!.register({ device_id: uniqueDeviceId('pnp-addr') })
    const next = await RawDevice.open(gw.linkUrl, { localAddress: '127.0.0.1' })
    await expect(next.register({ device_id: uniqueDeviceId('pnp-addr') })).resolves.toMatchObject({ type: 'registered' })
    for (const socket of [...waiting, elsewhere, next]) await socket.close()
  })

  it('counts by the forwarded client address behind a trusted balancer', async () => {
    const via = (client: string) => RawDevice.open(gw.linkUrl, { localAddress: '127.0.0.3', headers: { 'x-forwarded-for': client } })
    const waiting = await Promise.all(Array.from({ length: 3 }, () => via('198.51.100.7')))
    expect((await (await via('198.51.100.7')).closed).code).toBe(1013)
    const other = await via('198.51.100.8')
    await expect(other.register({ device_id: uniqueDeviceId('pnp-fwd') })).resolves.toMatchObject({ type: 'registered' })
    for (const socket of [...waiting, other]) await socket.close()
  })
})
