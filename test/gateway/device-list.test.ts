import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DIALECTS } from '../helpers/dialects.js'
import { startGatewayApp, type GatewayApp } from './helpers/gateway-app.js'
import { RawDevice } from './helpers/raw-device.js'

// Byte order: upper case before lower case, '-' (0x2d) before '.' (0x2e) before digits.
const IDS = ['B-2', 'a.1', 'a-1', 'a1', 'b', 'A']
const BYTE_ORDER = ['A', 'B-2', 'a-1', 'a.1', 'a1', 'b']

describe.each(DIALECTS)('device list on %s', (dialect) => {
  let gw: GatewayApp
  let devices: RawDevice[]
  beforeAll(async () => {
    gw = await startGatewayApp(dialect)
    devices = await Promise.all(IDS.map((id) => RawDevice.link(gw.linkUrl, { device_id: id, version: `v-${id}` })))
  })
  afterAll(async () => {
    await Promise.all(devices.map((d) => d.close()))
    await gw.close()
  })

  const list = async (query = '', path = '/api/v1/devices', user = 'root') => gw.app.inject({ method: 'GET', url: `${path}${query}`, headers: { authorization: await gw.auth(user) } })

  it('sorts devices by id in byte order and returns full records', async () => {
    const body = (await list()).json()
    expect(body.devices.map((d: { device_id: string }) => d.device_id)).toEqual(BYTE_ORDER)
    expect(body.next_after).toBeUndefined()
    expect(body.devices[0]).toEqual({
      device_id: 'A',
      labels: {},
      rated_cph: null,
      hostname: 'A',
      ip: '127.0.0.1',
      version: 'v-A',
      connect_time: expect.any(Number),
      last_heartbeat: null,
      last_status: {},
      messages_sent: 0,
      messages_received: 0,
      alive: true,
      registered: true,
      connected: true,
    })
  })

  it('pages with limit, after and next_after', async () => {
    const seen: string[] = []
    let query = '?limit=4'
    for (;;) {
      const body = (await list(query)).json()
      seen.push(...body.devices.map((d: { device_id: string }) => d.device_id))
      if (!body.next_after) break
      query = `?limit=4&after=${encodeURIComponent(body.next_after)}`
    }
    expect(seen).toEqual(BYTE_ORDER)
    const two = (await list('?limit=2&after=B-2')).json()
    expect(two.devices.map((d: { device_id: string }) => d.device_id)).toEqual(['a-1', 'a.1'])
    expect(two.next_after).toBe('a.1')
  })

  it('pages discover the same way', async () => {
    const first = (await list('?limit=5', '/api/v1/devices/discover')).json()
    expect(first.devices.map((d: { device_id: string }) => d.device_id)).toEqual(BYTE_ORDER.slice(0, 5))
    expect(first.next_after).toBe('a1')
    const rest = (await list('?limit=5&after=a1', '/api/v1/devices/discover')).json()
    expect(rest.devices).toEqual([{ device_id: 'b', hostname: 'b', version: 'v-b', alive: true }])
    expect(rest.next_after).toBeUndefined()
  })

  const ids = (body: { devices: { device_id: string }[] }) => body.devices.map((d) => d.device_id)

  it('finds devices by id prefix, case-sensitive, paging within the matches', async () => {
    expect(ids((await list('?prefix=a')).json())).toEqual(['a-1', 'a.1', 'a1'])
    expect(ids((await list('?prefix=B')).json())).toEqual(['B-2'])
    expect(ids((await list('?prefix=a.')).json())).toEqual(['a.1'])
    expect((await list('?prefix=zz')).json()).toEqual({ success: true, devices: [] })
    const first = (await list('?prefix=a&limit=2')).json()
    expect(ids(first)).toEqual(['a-1', 'a.1'])
    expect(first.next_after).toBe('a.1')
    const rest = (await list('?prefix=a&limit=2&after=a.1')).json()
    expect(ids(rest)).toEqual(['a1'])
    expect(rest.next_after).toBeUndefined()
  })

  it('counts the matching devices and those online when asked, whatever the page', async () => {
    expect((await list('?limit=1')).json().counts).toBeUndefined()
    expect((await list('?limit=1&counts=true')).json().counts).toEqual({ total: 6, online: 6 })
    expect((await list('?prefix=a&counts=true&after=a1')).json()).toMatchObject({ devices: [], counts: { total: 3, online: 3 } })
    // A device known from an earlier link but not linked now, and a linked one that leaves.
    await gw.storage.db.insertInto('devices').values({ device_id: 'a2', hostname: 'a2', ip: '', version: '1', last_status: '{}', created_at: 1 }).execute()
    const leaving = devices[IDS.indexOf('a1')]!
    await leaving.close()
    await expect.poll(async () => (await list('?prefix=a&counts=true')).json().counts).toEqual({ total: 4, online: 2 })
    expect((await list('?counts=true')).json().counts).toEqual({ total: 7, online: 5 })
  })

  it('counts only the devices bound to a user', async () => {
    expect((await list('?counts=true', '/api/v1/devices', 'alice')).json()).toEqual({ success: true, devices: [], counts: { total: 0, online: 0 } })
  })

  it.each(['?limit=0', '?limit=1001', '?limit=abc', '?limit=1.5', '?after=a%2Fb', `?after=${'x'.repeat(65)}`])('refuses %s with 400', async (query) => {
    expect((await list(query)).statusCode).toBe(400)
    expect((await list(query, '/api/v1/devices/discover')).statusCode).toBe(400)
  })

  it.each(['?prefix=', '?prefix=a%2Fb', '?prefix=a%20', `?prefix=${'x'.repeat(65)}`, '?counts=maybe'])('refuses the list query %s with 400', async (query) => {
    const res = await list(query)
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ success: false, error: 'bad_request' })
  })
})
