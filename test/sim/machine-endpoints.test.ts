import { inflateSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { DEVICE_ENDPOINTS, ITEMS, testMachine } from './machine-helpers.js'


describe('simulated machine: every device endpoint', () => {
  it('answers every device-side path of seed §4.3–4.11 with a 2xx object', async () => {
    const { call } = testMachine()
    for (const [method, path, body] of DEVICE_ENDPOINTS) {
      const res = await call(method, path, body ?? null)
      expect({ method, path, status: res.status, isObject: typeof res.data === 'object' && res.data !== null }).toEqual({
        method,
        path,
        status: expect.toSatisfy((s: number) => s >= 200 && s < 300),
        isObject: true,
      })
    }
  })

  it('gives the shapes the gateway unwraps: orders, order, parsed, extensions, marketplace, cameras, ports', async () => {
    const { clock, call } = testMachine()
    const order = (await call('POST', '/orders', { name: 'panel', items: ITEMS, settings: { fiducials: 2 } })).data.order
    expect(order).toMatchObject({ id: 'ord-0001', name: 'panel', status: 'pending', created_at: clock.now() / 1000, items: ITEMS, settings: { fiducials: 2 } })
    expect((await call('POST', '/orders', { name: 'x' })).status).toBe(201)
    expect((await call('GET', '/orders')).data.orders).toHaveLength(2)
    expect((await call('GET', '/orders/ord-0001')).data.order.id).toBe('ord-0001')
    expect((await call('GET', '/orders/nope')).status).toBe(404)
    expect((await call('GET', '/extensions')).data.extensions[0]).toEqual({ id: 'feeder-autoload', name: 'Feeder Auto-Load', version: '1.4.2', installed: true })
    expect((await call('GET', '/extensions/marketplace')).data.marketplace[0]).toMatchObject({ id: 'feeder-autoload', description: expect.any(String), downloads: 1843 })
    expect((await call('GET', '/cameras/status')).data).toEqual({
      cameras: { up: { connected: true, resolution: '640x480' }, down: { connected: true, resolution: '640x480' } },
    })
    expect((await call('GET', '/debug/ports')).data.ports[0]).toEqual({ name: '/dev/ttyUSB0', description: expect.any(String) })
  })

  it('serves camera frames as base64 PNG images of the stated size', async () => {
    const { call } = testMachine()
    for (const cam of ['up', 'down']) {
      const frame = (await call('GET', `/cameras/${cam}/frame`)).data
      expect(frame).toMatchObject({ content_type: 'image/png', encoding: 'base64', width: 160, height: 120 })
      const png = Buffer.from(frame.data, 'base64')
      expect(png.subarray(1, 4).toString()).toBe('PNG')
      expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([160, 120])
    }
    expect((await call('GET', '/cameras/left/frame')).status).toBe(400)
    expect((await call('POST', '/vision/detect/left', {})).status).toBe(400)
  })

  it('draws the head where it is: the upper camera frame changes when the head moves', async () => {
    const { clock, call } = testMachine()
    const before = (await call('GET', '/cameras/up/frame')).data.data
    await call('POST', '/hardware/move', { x: 200, y: 150 })
    clock.advance(10_000)
    const after = (await call('GET', '/cameras/up/frame')).data.data
    expect(after).not.toBe(before)
    // The head crosshair is red at (200, 150) mm → pixel (80, 60) at 0.4 px/mm.
    const png = Buffer.from(after, 'base64')
    const idat = png.subarray(33 + 8, 33 + 8 + png.readUInt32BE(33))
    const raw = inflateSync(idat)
    const pixel = (x: number, y: number) => [...raw.subarray(y * (160 * 3 + 1) + 1 + x * 3, y * (160 * 3 + 1) + 1 + x * 3 + 3)]
    expect(pixel(80, 60)).toEqual([230, 40, 40])
  })

  it('logs in configured operators only', async () => {
    const { call } = testMachine({ operators: [{ username: 'alice', password: 's3cret' }] })
    expect(await call('POST', '/auth/login', { username: 'alice', password: 's3cret' })).toEqual({
      status: 200,
      data: { user: { id: 'alice', username: 'alice', display_name: 'alice', role: 'operator' } },
    })
    expect((await call('POST', '/auth/login', { username: 'alice', password: 'wrong' })).status).toBe(401)
    expect((await call('POST', '/auth/login', { username: 'operator', password: 'operator' })).status).toBe(401)
    expect((await call('POST', '/auth/login', { username: 'alice' })).status).toBe(400)
  })

  it('validates settings per key and resets them to factory values', async () => {
    const { call } = testMachine()
    expect((await call('PUT', '/system/settings', { key: 'light_brightness', value: 100 })).data).toMatchObject({ updated: true, key: 'light_brightness', value: 100 })
    expect((await call('PUT', '/system/settings', { key: 'warp_drive', value: 1 })).data).toMatchObject({ error: 'unknown_setting' })
    expect((await call('PUT', '/system/settings', { key: 'light_brightness', value: 300 })).data).toMatchObject({ error: 'invalid_value' })
    expect((await call('PUT', '/system/settings', { key: 'nozzle', value: 'CN999' })).status).toBe(400)
    expect((await call('PUT', '/system/settings', { key: 'vision_enabled', value: 'yes' })).status).toBe(400)
    expect((await call('PUT', '/system/settings', { value: 1 })).status).toBe(400)
    expect((await call('GET', '/system/settings')).data.settings.light_brightness).toBe(100)
    await call('POST', '/system/settings/reset')
    expect((await call('GET', '/system/settings')).data.settings.light_brightness).toBe(180)
  })

  it('answers serial commands like a GRBL motion controller and logs both directions', async () => {
    const { clock, call } = testMachine()
    expect((await call('POST', '/debug/send', { command: 'G0', params: 'X10 Y20 F6000' })).data).toEqual({ command: 'G0 X10 Y20 F6000', response: ['ok'], ok: true })
    clock.advance(5000)
    expect((await call('POST', '/debug/send', { command: 'M114' })).data.response).toEqual(['X:10.000 Y:20.000 Z:0.000 R:0.000', 'ok'])
    expect((await call('POST', '/debug/send', { command: 'G0', params: 'X999' })).data).toMatchObject({ ok: false, response: ['error:15'] })
    expect((await call('POST', '/debug/send', { command: 'hello' })).data.response).toEqual(['error:20'])
    const log = (await call('GET', '/debug/serial-log')).data.lines
    expect(log.slice(0, 2)).toEqual([
      { ts: expect.any(Number), direction: 'tx', line: 'G0 X10 Y20 F6000' },
      { ts: expect.any(Number), direction: 'rx', line: 'ok' },
    ])
    expect((await call('GET', '/debug/status')).data).toMatchObject({ tx_lines: 4, errors: 2, last_command: 'hello' })
  })

  it('keeps a component library with feeder slots and checks an order against stock', async () => {
    const { call } = testMachine()
    const created = await call('POST', '/warehouse/components', { id: 'cmp-xtal', name: 'Crystal 8MHz', value: '8MHz', stock: 2, feeder_slot: 7 })
    expect(created.status).toBe(201)
    expect((await call('POST', '/warehouse/components', { id: 'cmp-xtal', name: 'again' })).status).toBe(409)
    expect((await call('POST', '/warehouse/components', { name: 'x', feeder_slot: 1 })).data).toMatchObject({ error: 'slot_occupied' })
    expect((await call('PUT', '/warehouse/components/cmp-xtal', { stock: 1 })).data.component.stock).toBe(1)
    expect((await call('GET', '/warehouse/feeder-slots')).data.slots[6]).toMatchObject({ slot: 7, component_id: 'cmp-xtal', loaded: true, remaining: 1 })
    await call('POST', '/orders', { name: 'o', items: [ITEMS[0], { component: '8MHz', x: 1, y: 1, angle: 0 }, { component: '8MHz', x: 2, y: 1, angle: 0 }] })
    const check = (await call('POST', '/warehouse/check-bom', {})).data
    expect(check).toMatchObject({ ok: false, order_id: 'ord-0001', missing: [{ component: '8MHz', needed: 2, in_stock: 1 }] })
    expect((await call('GET', '/warehouse/order-availability', null, { order_id: 'ord-0001' })).data.available).toBe(false)
    expect((await call('GET', '/warehouse/bom')).data.bom.items).toHaveLength(2)
    expect((await call('DELETE', '/warehouse/components/cmp-xtal')).data).toEqual({ deleted: true, id: 'cmp-xtal' })
    expect((await call('GET', '/warehouse/components/cmp-xtal')).status).toBe(404)
  })

  it('installs and uninstalls marketplace extensions with 404 and 409 where due', async () => {
    const { call } = testMachine()
    expect((await call('POST', '/extensions/aoi-lite/install')).data).toMatchObject({ installed: true, extension: { id: 'aoi-lite', installed: true } })
    expect((await call('POST', '/extensions/aoi-lite/install')).status).toBe(409)
    expect((await call('POST', '/extensions/unknown-ext/install')).status).toBe(404)
    expect((await call('GET', '/extensions/stats')).data.stats).toMatchObject({ installed: 3, available: 5 })
    expect((await call('POST', '/extensions/aoi-lite/uninstall')).status).toBe(200)
    expect((await call('POST', '/extensions/aoi-lite/uninstall')).status).toBe(409)
    expect((await call('GET', '/extensions')).data.extensions.find((e: { id: string }) => e.id === 'aoi-lite').installed).toBe(false)
  })

  it('switches vision models and targets, refusing unknown names', async () => {
    const { call } = testMachine()
    expect((await call('POST', '/vision/model/switch', { model: 'gpt-vision' })).data).toMatchObject({ error: 'unknown_model' })
    expect((await call('POST', '/vision/target/switch', { target: 'fiducial' })).data).toEqual({ switched: true, target: 'fiducial' })
    expect((await call('GET', '/vision/status')).data).toMatchObject({ target: 'fiducial', model: 'pnp-yolo-v3' })
    const detections = (await call('POST', '/vision/detect/up', {})).data.detections
    expect(detections.length).toBeGreaterThan(0)
    expect(detections[0]).toMatchObject({ label: 'fiducial', confidence: expect.any(Number), bbox: expect.any(Array) })
  })

  it('reports its state in the heartbeat status', async () => {
    const { machine } = testMachine()
    expect(machine.status()).toMatchObject({ state: 'idle', position: { x: 0, y: 0, z: 0, r: 0 }, task: null, calibration: 'never' })
  })
})
