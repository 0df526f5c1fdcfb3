import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DIALECTS } from '../helpers/dialects.js'
import { startPlatformApp, type PlatformApp } from './platform-kit.js'

describe.each(DIALECTS)('platform time on %s', (dialect) => {
  let t: PlatformApp
  beforeAll(async () => {
    t = await startPlatformApp(dialect)
    await t.addDevice('tz-1')
  })
  afterAll(() => t.close())

  it('tells the server time in ms and ISO 8601', async () => {
    const before = Date.now()
    const body = (await t.device('GET', '/v1/time')).json()
    expect(body.success).toBe(true)
    expect(Number.isInteger(body.timestamp)).toBe(true)
    expect(body.timestamp).toBeGreaterThanOrEqual(before)
    expect(new Date(body.iso).getTime()).toBe(body.timestamp)
  })

  it('answers a sync request with the device time, both server times and the offset', async () => {
    const deviceTime = Date.now() - 5000
    const res = await t.device('POST', '/v1/device/tz-1/time/sync', { device_time: deviceTime })
    expect(res.statusCode).toBe(200)
    const body = res.json()
    expect(body).toMatchObject({ success: true, device_time: deviceTime })
    expect(body.server_send_time).toBeGreaterThanOrEqual(body.server_receive_time)
    expect(body.offset_ms).toBe(body.server_receive_time - deviceTime)
    for (const key of ['server_receive_time', 'server_send_time', 'offset_ms']) expect(Number.isInteger(body[key]), key).toBe(true)
  })

  it.each([[{}], [{ device_time: '1' }], [{ device_time: 1.5 }], [{ device_time: -1 }], [{ device_time: 1, x: 1 }]])('rejects the sync body %j with 400', async (body) => {
    expect((await t.device('POST', '/v1/device/tz-1/time/sync', body)).statusCode).toBe(400)
  })
})

describe.each(DIALECTS)('platform OTA check on %s', (dialect) => {
  let t: PlatformApp
  beforeAll(async () => {
    t = await startPlatformApp(dialect)
    await t.addDevice('ota-1')
  })
  afterAll(() => t.close())

  const release = {
    release_id: 'slave-2024.06.1',
    image_version: 42,
    display_version: '1.4.2',
    size: 123456,
    sha256: 'ab'.repeat(32),
    crc32: '1a2b3c4d',
    hw_version: 3,
  }
  const insertRelease = async (state: 'active' | 'published', overrides: Partial<typeof release> = {}) => {
    const row = { ...release, ...overrides }
    await t.storage.db
      .insertInto('firmware_releases')
      .values({ ...row, state, manifest: '{}', image: Buffer.from('img'), download_count: 0, created_at: Date.now() / 1000, created_by: 'admin', activated_at: null })
      .execute()
  }
  const check = async (query: string, path = '/v1/ota/check') => {
    const res = await t.app.inject({ method: 'GET', url: `${path}?device_id=ota-1&${query}`, headers: { host: 'fleet.example:8080' } })
    expect(res.statusCode, res.body).toBe(200)
    return res.json()
  }

  it('offers no update while no release is active', async () => {
    await insertRelease('published', { release_id: 'old-published', image_version: 99 })
    expect(await check('version=1')).toEqual({ success: true, update: false })
  })

  describe('with an active release', () => {
    beforeAll(async () => {
      await insertRelease('active')
    })

    it.each(['/svc/upgrade/check', '/v1/ota/check'])('offers it on %s when image_version is greater than an integer version', async (path) => {
      expect(await check('version=41', path)).toEqual({
        success: true,
        update: true,
        release: {
          release_id: release.release_id,
          image_version: 42,
          display_version: '1.4.2',
          size: 123456,
          sha256: release.sha256,
          crc32: release.crc32,
          url: 'http://fleet.example:8080/api/v1/firmware/slave/system.bin',
        },
      })
    })

    it.each([['version=42'], ['version=43'], ['version=1000000']])('offers nothing for %s', async (query) => {
      expect(await check(query)).toEqual({ success: true, update: false })
    })

    it.each([['1.4.1'], ['1.3.9'], ['0.9.0'], ['v1.4.1'], ['1.4.2-rc.1'], ['1.4.2-beta.11']])('offers it to the older semver %s', async (version) => {
      expect((await check(`version=${version}`)).update).toBe(true)
    })

    it.each([['1.4.2'], ['1.4.3'], ['2.0.0'], ['1.10.0'], ['1.4.2%2Bbuild.7']])('offers nothing to the same or newer semver %s', async (version) => {
      expect((await check(`version=${version}`)).update).toBe(false)
    })

    it('offers it when hw_version matches and nothing when it differs', async () => {
      expect((await check('version=1&hw_version=3')).update).toBe(true)
      expect(await check('version=1&hw_version=4')).toEqual({ success: true, update: false })
    })

    it.each([['version=abc'], [''], ['version=1&hw_version=x'], ['version=1.2'], ['version=1.2.3.4'], ['version=01.2.3'], ['version=1.2.3-'], ['version=1.2.3junk']])('rejects ?%s with 400', async (query) => {
      const res = await t.app.inject({ method: 'GET', url: `/v1/ota/check?device_id=ota-1&${query}` })
      expect(res.statusCode).toBe(400)
    })

    it('rejects a missing or invalid device_id with 400', async () => {
      expect((await t.app.inject({ method: 'GET', url: '/v1/ota/check?version=1' })).statusCode).toBe(400)
      expect((await t.app.inject({ method: 'GET', url: '/svc/upgrade/check?device_id=..&version=1' })).statusCode).toBe(400)
    })
  })
})
