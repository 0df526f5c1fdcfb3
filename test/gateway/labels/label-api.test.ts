import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DIALECTS } from '../../helpers/dialects.js'
import { startGatewayApp, type GatewayApp } from '../helpers/gateway-app.js'
import { machine, OPERATOR } from '../helpers/machine.js'
import { RawDevice } from '../helpers/raw-device.js'

type Answer = { statusCode: number; json(): any }

describe.each(DIALECTS)('labels of gateway machines (§15) on %s', (dialect) => {
  let gw: GatewayApp
  const linked: RawDevice[] = []
  beforeAll(async () => {
    gw = await startGatewayApp(dialect)
    for (const [id, version] of [['lb-1', '2.0'], ['lb-2', '2.0'], ['lb-3', '1.9'], ['lb-4', '2.0']] as const) {
      linked.push(await RawDevice.link(gw.linkUrl, { device_id: id, version }, machine))
    }
    // Known but no longer linked.
    await (await RawDevice.link(gw.linkUrl, { device_id: 'lb-5', version: '1.9' }, machine)).close()
    const login = await as('alice', 'POST', '/api/v1/devices/lb-1/auth/login', OPERATOR)
    expect(login.statusCode).toBe(200)
  })
  afterAll(async () => {
    await Promise.all(linked.map((d) => d.close()))
    await gw.close()
  })

  async function as(user: string, method: string, url: string, payload?: unknown): Promise<Answer> {
    return gw.app.inject({ method: method as 'GET', url, headers: { authorization: await gw.auth(user) }, ...(payload !== undefined ? { payload: payload as object } : {}) })
  }
  const put = (id: string, labels: unknown, user = 'root') => as(user, 'PUT', `/api/v1/admin/devices/${id}/labels`, { labels })
  const patch = (id: string, labels: unknown, user = 'root') => as(user, 'PATCH', `/api/v1/admin/devices/${id}/labels`, { labels })
  const bulk = (body: unknown, user = 'root') => as(user, 'POST', '/api/v1/admin/devices/labels', body)
  const labelsOf = async (id: string) => (await as('root', 'GET', `/api/v1/devices/${id}`)).json().device.labels
  const ids = async (query: string, user = 'root') => {
    const res = await as(user, 'GET', `/api/v1/devices?${query}`)
    expect(res.statusCode, JSON.stringify(res.json())).toBe(200)
    return res.json().devices.map((d: { device_id: string }) => d.device_id)
  }

  it('replaces with PUT and merges with PATCH (null removes a key); every record carries labels', async () => {
    const replaced = await put('lb-1', { site: 'sz', line: 'l1', 'fleetgate.io/customer': 'acme' })
    expect(replaced.statusCode).toBe(200)
    expect(replaced.json()).toMatchObject({ success: true, device: { device_id: 'lb-1', labels: { 'fleetgate.io/customer': 'acme', line: 'l1', site: 'sz' } } })
    const merged = await patch('lb-1', { line: 'l2', 'fleetgate.io/customer': null, empty: '' })
    expect(merged.json().device.labels).toEqual({ empty: '', line: 'l2', site: 'sz' })
    expect(await labelsOf('lb-1')).toEqual({ empty: '', line: 'l2', site: 'sz' })
    expect((await as('root', 'GET', '/api/v1/devices/lb-1/overview')).json().device.labels).toEqual({ empty: '', line: 'l2', site: 'sz' })
    expect(await labelsOf('lb-2')).toEqual({})
    expect((await put('lb-1', {})).json().device.labels).toEqual({})
  })

  it.each([
    ['an upper-case key', { Site: 'x' }, 'Site'],
    ['a key ending in a dot', { 'site.': 'x' }, 'site.'],
    ['a key of 64 characters', { ['k'.repeat(64)]: 'x' }, 'k'.repeat(64)],
    ['a value with a space', { site: 'a b' }, 'site'],
    ['a value of 64 characters', { site: 'v'.repeat(64) }, 'site'],
    ['a non-string value', { site: 3 }, undefined],
  ])('refuses %s with 400 naming the key, changing nothing', async (_name, labels, key) => {
    await put('lb-2', { keep: 'me' })
    const res = await put('lb-2', labels)
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ success: false, error: 'bad_request' })
    if (key !== undefined) expect(res.json().message).toContain(key)
    expect(await labelsOf('lb-2')).toEqual({ keep: 'me' })
  })

  it('refuses a 33rd label, by PUT and by PATCH, changing nothing', async () => {
    const many = Object.fromEntries(Array.from({ length: 32 }, (_, i) => [`k${i}`, 'v']))
    expect((await put('lb-3', many)).statusCode).toBe(200)
    expect((await patch('lb-3', { one: 'more' })).statusCode).toBe(400)
    expect((await put('lb-3', { ...many, one: 'more' })).statusCode).toBe(400)
    expect(Object.keys(await labelsOf('lb-3'))).toHaveLength(32)
    expect((await patch('lb-3', { k0: 'changed' })).statusCode).toBe(200)
    expect((await put('lb-3', {})).statusCode).toBe(200)
  })

  it('answers 404 for an unknown machine and 403 to a non-administrator', async () => {
    expect((await put('lb-nobody', { a: 'b' })).statusCode).toBe(404)
    expect((await patch('lb-nobody', { a: 'b' })).statusCode).toBe(404)
    expect((await put('lb-1', { a: 'b' }, 'alice')).statusCode).toBe(403)
    expect((await patch('lb-1', { a: 'b' }, 'alice')).statusCode).toBe(403)
    expect((await bulk({ selector: '', set: { a: 'b' } }, 'alice')).statusCode).toBe(403)
    expect(await labelsOf('lb-1')).toEqual({})
  })

  it('changes many machines by selector or by ids in one transaction, with one audit record each', async () => {
    await put('lb-1', { site: 'sz', line: 'l1' })
    await put('lb-2', { site: 'sz', line: 'l2' })
    await put('lb-3', { site: 'bj' })
    await put('lb-4', { site: 'sz', line: 'l1', retired: '' })
    await put('lb-5', {})
    const bySelector = await bulk({ selector: 'site=sz, !retired', set: { tier: 'gold' }, remove: ['line'] })
    expect(bySelector.json()).toEqual({ success: true, matched: 2, changed: 2 })
    expect(await labelsOf('lb-1')).toEqual({ site: 'sz', tier: 'gold' })
    expect(await labelsOf('lb-4')).toEqual({ line: 'l1', retired: '', site: 'sz' })
    // Once more: nothing differs.
    expect((await bulk({ selector: 'site=sz, !retired', set: { tier: 'gold' }, remove: ['line'] })).json()).toEqual({ success: true, matched: 2, changed: 0 })
    const byIds = await bulk({ devices: ['lb-3', 'lb-5', 'lb-nobody'], set: { tier: 'silver' } })
    expect(byIds.json()).toEqual({ success: true, matched: 2, changed: 2 })
    expect(await labelsOf('lb-5')).toEqual({ tier: 'silver' })
    const audit = (await as('root', 'GET', '/api/v1/admin/audit?action=labels&limit=3')).json().records
    expect(audit[0]).toMatchObject({ action: 'labels', detail: { devices: 3, matched: 2, changed: 2, set: { tier: 'silver' } } })
    expect(audit[1]).toMatchObject({ action: 'labels', detail: { selector: 'site=sz, !retired', matched: 2, changed: 0 } })
  })

  it.each([
    ['both selector and devices', { selector: 'a', devices: ['lb-1'], set: { a: 'b' } }, 'bad_request'],
    ['neither', { set: { a: 'b' } }, 'bad_request'],
    ['nothing to change', { selector: 'a' }, 'bad_request'],
    ['a bad key to set', { selector: '', set: { 'A!': 'b' } }, 'bad_request'],
    ['a bad key to remove', { selector: '', remove: ['-x'] }, 'bad_request'],
    ['a malformed selector', { selector: 'site in (a,b', set: { a: 'b' } }, 'invalid_selector'],
  ])('refuses a bulk change with %s, changing nothing', async (_name, body, error) => {
    const before = await labelsOf('lb-1')
    const res = await bulk(body)
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ success: false, error })
    expect(await labelsOf('lb-1')).toEqual(before)
  })

  it('lists machines matching a selector, with the bindings of a user still applied, and counts them', async () => {
    expect(await ids('selector=site%3Dsz')).toEqual(['lb-1', 'lb-2', 'lb-4'])
    expect(await ids(`selector=${encodeURIComponent('site in (sz,bj), line notin (l1)')}`)).toEqual(['lb-1', 'lb-2', 'lb-3'])
    expect(await ids(`selector=${encodeURIComponent('@version=1.9')}`)).toEqual(['lb-3', 'lb-5'])
    expect(await ids(`selector=${encodeURIComponent('@online=false')}`)).toEqual(['lb-5'])
    expect(await ids('selector=site%3Dsz', 'alice')).toEqual(['lb-1'])
    const counted = (await as('root', 'GET', `/api/v1/devices?selector=${encodeURIComponent('tier')}&counts=true&limit=1`)).json()
    expect(counted.devices.map((d: { device_id: string }) => d.device_id)).toEqual(['lb-1'])
    expect(counted.counts).toEqual({ total: 4, online: 3 })
    const bad = await as('root', 'GET', `/api/v1/devices?selector=${encodeURIComponent('site=sz,,')}`)
    expect(bad.statusCode).toBe(400)
    expect(bad.json()).toMatchObject({ success: false, error: 'invalid_selector', position: expect.any(Number) })
  })

  it('lists the keys and their values over the caller’s machines, most used first', async () => {
    const keys = (await as('root', 'GET', '/api/v1/devices/labels')).json().keys
    expect(keys.find((k: { key: string }) => k.key === 'site')).toEqual({ key: 'site', values: [{ value: 'sz', devices: 3 }, { value: 'bj', devices: 1 }] })
    expect(keys.find((k: { key: string }) => k.key === 'tier')).toEqual({ key: 'tier', values: [{ value: 'gold', devices: 2 }, { value: 'silver', devices: 2 }] })
    const alices = (await as('alice', 'GET', '/api/v1/devices/labels')).json().keys
    expect(alices).toEqual([
      { key: 'site', values: [{ value: 'sz', devices: 1 }] },
      { key: 'tier', values: [{ value: 'gold', devices: 1 }] },
    ])
  })

  it('keeps labels when a machine re-links or its key is reset, and drops them when it is forgotten', async () => {
    await put('lb-2', { keep: 'yes' })
    const index = 1
    await linked[index]!.close()
    linked[index] = await RawDevice.link(gw.linkUrl, { device_id: 'lb-2', version: '2.0' }, machine)
    expect(await labelsOf('lb-2')).toEqual({ keep: 'yes' })
    expect((await as('root', 'DELETE', '/api/v1/admin/devices/lb-2/key')).statusCode).toBe(200)
    expect(await labelsOf('lb-2')).toEqual({ keep: 'yes' })
    expect((await as('root', 'DELETE', '/api/v1/admin/devices/lb-5')).statusCode).toBe(200)
    const rows = await gw.storage.db.selectFrom('device_labels').select('key').where('device_id', '=', 'lb-5').execute()
    expect(rows).toEqual([])
  })
})
