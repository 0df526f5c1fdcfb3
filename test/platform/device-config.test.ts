import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DIALECTS } from '../helpers/dialects.js'
import { CONSOLE, startPlatformApp, type PlatformApp } from './platform-kit.js'

describe.each(DIALECTS)('platform device configuration on %s', (dialect) => {
  let t: PlatformApp
  beforeAll(async () => {
    t = await startPlatformApp(dialect)
  })
  afterAll(() => t.close())

  const get = async (id: string) => (await t.device('GET', `/v1/device/${id}/config`)).json()
  const set = (id: string, body: object) => t.device('POST', `/v1/device/${id}/config`, body)

  it('answers {config:{}, version:0} for a device never configured', async () => {
    await t.addDevice('cf-new')
    expect(await get('cf-new')).toEqual({ success: true, config: {}, version: 0, updated_at: null })
  })

  it('replaces the configuration and bumps the version on every POST', async () => {
    await t.addDevice('cf-1')
    const first = await set('cf-1', { config: { interval: 10, mode: 'eco' } })
    expect(first.statusCode).toBe(200)
    expect(first.json()).toMatchObject({ success: true, config: { interval: 10, mode: 'eco' }, version: 1 })
    expect(Number.isInteger(first.json().updated_at)).toBe(true)
    const second = await set('cf-1', { config: { interval: 20 } })
    expect(second.json()).toMatchObject({ config: { interval: 20 }, version: 2 })
    expect(await get('cf-1')).toMatchObject({ config: { interval: 20 }, version: 2 })
  })

  it('accepts a POST based on the current version and answers 409 to a stale one', async () => {
    await t.addDevice('cf-occ')
    expect((await set('cf-occ', { config: { a: 1 }, version: 0 })).json().version).toBe(1)
    expect((await set('cf-occ', { config: { a: 2 }, version: 1 })).json().version).toBe(2)
    const stale = await set('cf-occ', { config: { a: 3 }, version: 1 })
    expect(stale.statusCode).toBe(409)
    expect(stale.json()).toMatchObject({ success: false, error: 'conflict', version: 2 })
    const staleNew = await set('cf-occ', { config: { a: 3 }, version: 0 })
    expect(staleNew.statusCode).toBe(409)
    expect(await get('cf-occ')).toMatchObject({ config: { a: 2 }, version: 2 })
  })

  it('lets exactly one of two concurrent writers based on the same version win', async () => {
    await t.addDevice('cf-race')
    await set('cf-race', { config: { n: 0 } })
    const answers = await Promise.all([set('cf-race', { config: { n: 1 }, version: 1 }), set('cf-race', { config: { n: 2 }, version: 1 })])
    expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 409])
    expect((await get('cf-race')).version).toBe(2)
  })

  it('accepts 64 KiB of configuration and answers 413 above it', async () => {
    await t.addDevice('cf-big')
    // {"b":"…"} is 8 bytes of JSON around the string.
    const fits = { b: 'x'.repeat(64 * 1024 - 8) }
    expect((await set('cf-big', { config: fits })).statusCode).toBe(200)
    const tooBig = await set('cf-big', { config: { b: 'x'.repeat(64 * 1024 - 7) } })
    expect(tooBig.statusCode).toBe(413)
    expect(tooBig.json().error).toBe('payload_too_large')
    expect((await get('cf-big')).version).toBe(1)
  })

  it.each([
    [{}],
    [{ config: [] }],
    [{ config: 'a=1' }],
    [{ config: null }],
    [{ config: {}, version: -1 }],
    [{ config: {}, version: '1' }],
    [{ config: {}, version: 1.5 }],
    [{ config: {}, extra: true }],
  ])('rejects %j with 400', async (body) => {
    await t.addDevice('cf-bad').catch(() => undefined)
    expect((await set('cf-bad', body)).statusCode).toBe(400)
  })

  it('records a change made with the console token as an operation log entry', async () => {
    await t.addDevice('cf-console')
    await t.app.inject({ method: 'POST', url: '/v1/device/cf-console/config', headers: CONSOLE, payload: { config: { a: 1 } } })
    const logs = (await t.admin('GET', '/api/admin/logs?source=operation&device_id=cf-console')).json().logs
    expect(logs.map((l: { tag: string }) => l.tag)).toContain('config.set')
  })
})
