import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FORWARDED_ENDPOINTS } from '../../src/gateway/forwarding/forwarded-endpoints.js'
import { DIALECTS } from '../helpers/dialects.js'
import { startGatewayApp, type GatewayApp } from './helpers/gateway-app.js'
import { RawDevice, type RequestHandler } from './helpers/raw-device.js'
import { BODIES, concrete, key } from './helpers/sample-requests.js'


/** The device answers with every plain field at once plus an echo of the request. */
const everything: RequestHandler = (frame) => ({
  status: 200,
  data: { orders: [{ id: 'o1' }], order: { id: 'o1' }, parsed: { count: 1 }, extensions: [{ id: 'e1' }], marketplace: [{ id: 'm1' }], echo: frame.path },
})

describe.each(DIALECTS)('forwarding on %s', (dialect) => {
  let gw: GatewayApp
  let device: RawDevice
  let root: string
  const DEVICE = 'pnp-fwd-1'
  beforeAll(async () => {
    gw = await startGatewayApp(dialect)
    device = await RawDevice.link(gw.linkUrl, { device_id: DEVICE }, everything)
    root = await gw.auth('root')
  })
  afterAll(async () => {
    await device.close()
    await gw.close()
  })

  const call = (method: string, path: string, payload?: unknown, headers: Record<string, string> = {}) =>
    gw.app.inject({
      method: method as 'GET',
      url: `/api/v1/devices/${DEVICE}${path}`,
      headers: { authorization: root, ...headers },
      ...(payload !== undefined ? { payload: payload as object } : {}),
    })

  it('has a sample body for every endpoint that takes one', () => {
    const needing = FORWARDED_ENDPOINTS.filter((e) => e.body).map(key)
    expect(needing.filter((k) => !(k in BODIES))).toEqual([])
  })

  it.each(FORWARDED_ENDPOINTS.map((e) => [key(e), e] as const))('forwards %s with its method, path, query, body and user', async (_name, endpoint) => {
    device.handler = everything
    const sent = device.nextRequest()
    const body = BODIES[key(endpoint)]
    const res = await call(endpoint.method, `${concrete(endpoint.path)}?page=2&tag=a&tag=b`, body)
    const frame = await sent
    expect(frame).toMatchObject({
      type: 'request',
      method: endpoint.method,
      path: concrete(endpoint.path),
      query: { page: '2', tag: ['a', 'b'] },
      body: body ?? null,
      user: { id: 'root', username: 'root', role: 'admin' },
    })
    expect(typeof frame.id).toBe('string')
    if (endpoint.answer.kind === 'envelope') {
      expect(res.statusCode).toBe(200)
      expect(res.json()).toEqual({ success: true, status: 200, data: expect.objectContaining({ echo: concrete(endpoint.path) }) })
    } else {
      const field = endpoint.answer.field
      const expected = { orders: [{ id: 'o1' }], order: { id: 'o1' }, parsed: { count: 1 }, extensions: [{ id: 'e1' }], marketplace: [{ id: 'm1' }] }[field]
      expect(res.statusCode).toBe(endpoint.answer.status ?? 200)
      expect(res.json()).toEqual({ success: true, [field]: expected })
    }
  })

  it('answers 201 to POST /orders even when the device says 200', async () => {
    const res = await call('POST', '/orders', BODIES['POST /orders'])
    expect(res.statusCode).toBe(201)
    expect(res.json()).toEqual({ success: true, order: { id: 'o1' } })
  })

  it('forwards a body-less POST with body null and lets the device status through the envelope', async () => {
    device.handler = () => ({ status: 409, data: { error: 'busy', message: 'task running' } })
    const res = await call('POST', '/tasks/pause')
    expect(device.requests.at(-1)).toMatchObject({ method: 'POST', path: '/tasks/pause', body: null })
    expect(res.statusCode).toBe(409)
    expect(res.json()).toEqual({ success: false, status: 409, data: { error: 'busy', message: 'task running' } })
  })

  it('forwards tasks/start without a body as body null', async () => {
    device.handler = everything
    const res = await call('POST', '/tasks/start')
    expect(res.statusCode).toBe(200)
    expect(device.requests.at(-1)).toMatchObject({ path: '/tasks/start', body: null })
  })

  it.each(FORWARDED_ENDPOINTS.filter((e) => e.answer.kind === 'plain').map((e) => [key(e), e] as const))(
    'passes a device error on %s through as device_error with its status',
    async (_name, endpoint) => {
      device.handler = () => ({ status: 404, data: { error: 'not_found', message: 'no such order' } })
      const res = await call(endpoint.method, concrete(endpoint.path), BODIES[key(endpoint)])
      expect(res.statusCode).toBe(404)
      expect(res.json()).toEqual({ success: false, error: 'device_error', message: 'no such order', status: 404, data: { error: 'not_found', message: 'no such order' } })
    },
  )

  it.each(FORWARDED_ENDPOINTS.filter((e) => e.answer.kind === 'plain').map((e) => [key(e), e] as const))(
    'answers 502 bad_device_response when a 2xx on %s lacks its field',
    async (_name, endpoint) => {
      device.handler = () => ({ status: 200, data: { something: 'else' } })
      const res = await call(endpoint.method, concrete(endpoint.path), BODIES[key(endpoint)])
      expect(res.statusCode).toBe(502)
      expect(res.json()).toMatchObject({ success: false, error: 'bad_device_response' })
    },
  )

  it.each([
    ['POST', '/hardware/move', {}],
    ['POST', '/hardware/move', { speed: 10, relative: true }],
    ['POST', '/hardware/move', { x: '5' }],
    ['POST', '/hardware/move', { x: 1, relative: 'yes' }],
    ['POST', '/hardware/pump', {}],
    ['POST', '/hardware/pump', { state: 'on' }],
    ['POST', '/hardware/valve', { state: 1 }],
    ['POST', '/hardware/light', { state: true, brightness: 256 }],
    ['POST', '/hardware/light', { state: true, brightness: -1 }],
    ['POST', '/hardware/light', { state: true, brightness: 12.5 }],
    ['POST', '/hardware/light', { brightness: 10 }],
    ['POST', '/hardware/pick', { component_id: 'C1', x: 1, y: 2 }],
    ['POST', '/hardware/pick', { component_id: 5, x: 1, y: 2, angle: 0 }],
    ['PUT', '/system/settings', { value: 1 }],
    ['POST', '/debug/send', { command: 5 }],
    ['POST', '/debug/send', { command: 'G28', params: ['X'] }],
    ['POST', '/orders', { name: 'A', items: [{ component: 'R1', x: 1, y: 2 }] }],
    ['POST', '/orders', { name: 'A', items: 'none' }],
    ['POST', '/orders', { name: 'A', items: [], settings: [] }],
    ['POST', '/orders/parse', { filename: 'a.pos', encoding: 'hex', data: 'AAAA' }],
    ['POST', '/orders/parse', { filename: 'a.pos', encoding: 'base64', data: 'abc' }],
    ['POST', '/orders/parse', { filename: 'a.pos', encoding: 'base64', data: 'ab!=' }],
    ['POST', '/orders/parse', { filename: 'a.pos', encoding: 'base64', data: 'A===' }],
    ['POST', '/orders/parse', { encoding: 'base64', data: 'AAAA' }],
    ['POST', '/tasks/start', { order_id: 7 }],
    ['POST', '/warehouse/components', [1, 2]],
    ['POST', '/vision/model/switch', 'yolo'],
  ])('refuses %s %s with body %j as 400 without forwarding', async (method, path, body) => {
    const before = device.requests.length
    const res = await call(method, path, body, typeof body === 'string' ? { 'content-type': 'application/json' } : {})
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ success: false, error: 'bad_request' })
    expect(device.requests.length).toBe(before)
  })

  it.each([
    ['a camera other than up or down', 'POST', '/vision/detect/left'],
    ['an order id with a space', 'GET', '/orders/a%20b'],
    ['an order id with an encoded slash', 'GET', '/orders/a%2Fb'],
    ['an extension id of 65 characters', 'POST', `/extensions/${'e'.repeat(65)}/install`],
    ['a component id with a plus', 'GET', '/warehouse/components/a+b'],
  ])('refuses %s with 400', async (_name, method, path) => {
    const res = await call(method, path)
    expect(res.statusCode).toBe(400)
  })

  it('refuses a malformed device id with 400', async () => {
    const res = await gw.app.inject({ method: 'GET', url: `/api/v1/devices/${'d'.repeat(65)}/hardware/position`, headers: { authorization: root } })
    expect(res.statusCode).toBe(400)
  })

  it.each([
    ['GET', '/hardware/teleport'],
    ['DELETE', '/hardware/position'],
    ['GET', '/auth/login'],
    ['GET', '/orders/o1/items'],
  ])('answers 404 for the unlisted %s %s', async (method, path) => {
    const before = device.requests.length
    const res = await call(method, path)
    expect(res.statusCode).toBe(404)
    expect(res.json()).toMatchObject({ success: false, error: 'not_found' })
    expect(device.requests.length).toBe(before)
  })

  it('needs a token on forwarded endpoints', async () => {
    const res = await gw.app.inject({ method: 'POST', url: `/api/v1/devices/${DEVICE}/hardware/move`, payload: { x: 1 } })
    expect(res.statusCode).toBe(401)
  })

  it('accepts placement files above 1 MiB on /orders/parse only, up to 16 MiB', async () => {
    device.handler = everything
    const data = Buffer.alloc(1_500_000, 7).toString('base64')
    const parse = await call('POST', '/orders/parse', { filename: 'big.csv', encoding: 'base64', data })
    expect(parse.statusCode).toBe(200)
    expect((device.requests.at(-1)!.body as { data: string }).data).toBe(data)
    const elsewhere = await call('POST', '/warehouse/components', { blob: data })
    expect(elsewhere.statusCode).toBe(413)
    const tooBig = await call('POST', '/orders/parse', { filename: 'huge.csv', encoding: 'base64', data: 'A'.repeat(16_777_216) })
    expect(tooBig.statusCode).toBe(413)
    expect(tooBig.json()).toMatchObject({ error: 'payload_too_large' })
  })

  it('answers 502 device_unavailable for a device that is not linked', async () => {
    for (const id of ['pnp-never-seen', DEVICE + '-gone']) {
      const res = await gw.app.inject({ method: 'GET', url: `/api/v1/devices/${id}/hardware/position`, headers: { authorization: root } })
      expect(res.statusCode).toBe(502)
      expect(res.json()).toMatchObject({ success: false, error: 'device_unavailable' })
    }
  })

  it('answers 502 bad_device_response to a 1xx device status', async () => {
    device.handler = () => ({ status: 101, data: null })
    const res = await call('GET', '/hardware/position')
    expect(res.statusCode).toBe(502)
    expect(res.json()).toMatchObject({ error: 'bad_device_response' })
  })

  it('lists every forwarded endpoint in /openapi.json under its own path with params and body', async () => {
    const doc = (await gw.app.inject({ method: 'GET', url: '/openapi.json' })).json()
    for (const endpoint of FORWARDED_ENDPOINTS) {
      const path = `/api/v1/devices/{device_id}${endpoint.path.replace(/:(\w+)/g, '{$1}')}`
      const operation = doc.paths[path]?.[endpoint.method.toLowerCase()]
      expect(operation, `${endpoint.method} ${path}`).toBeDefined()
      const names = operation.parameters.filter((p: { in: string }) => p.in === 'path').map((p: { name: string }) => p.name)
      expect(names).toEqual(['device_id', ...[...endpoint.path.matchAll(/:(\w+)/g)].map((m) => m[1])])
      if (endpoint.body) expect(operation.requestBody?.content?.['application/json']?.schema).toBeDefined()
    }
    // A body that may be omitted is documented as optional; a required one as required.
    expect(doc.paths['/api/v1/devices/{device_id}/tasks/start'].post.requestBody.required).toBe(false)
    expect(doc.paths['/api/v1/devices/{device_id}/hardware/move'].post.requestBody.required).toBe(true)
  })
})
