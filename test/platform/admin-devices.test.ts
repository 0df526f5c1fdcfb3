import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DIALECTS } from '../helpers/dialects.js'
import { loginAs } from '../helpers/test-app.js'
import { CONSOLE, startPlatformApp, type PlatformApp } from './platform-kit.js'

describe.each(DIALECTS)('platform admin API on %s', (dialect) => {
  let t: PlatformApp
  beforeAll(async () => {
    t = await startPlatformApp(dialect)
  })
  afterAll(() => t.close())

  describe('authentication', () => {
    const routes = [
      ['GET', '/api/admin/meta'],
      ['GET', '/api/admin/summary'],
      ['GET', '/api/admin/devices'],
      ['GET', '/api/admin/device/x/detail'],
      ['POST', '/api/admin/device/add'],
      ['POST', '/api/admin/device/x/delete'],
      ['POST', '/api/admin/device/x/command'],
      ['POST', '/api/admin/device/x/expression'],
      ['POST', '/api/admin/device/x/hid'],
      ['GET', '/api/admin/device/x/telemetry'],
      ['GET', '/api/admin/logs'],
      ['POST', '/api/admin/logs/clear'],
      ['GET', '/api/admin/commands'],
      ['POST', '/api/admin/commands/clear'],
    ] as const

    it.each(routes)('answers 401 to %s %s without credentials or with a wrong console token', async (method, url) => {
      // Wrong console tokens are limited per client address (10 per 15 minutes): one address per route.
      const remoteAddress = `10.88.0.${routes.findIndex(([m, u]) => m === method && u === url) + 1}`
      for (const headers of [{}, { 'x-console-token': 'not-the-token' }, { authorization: 'Bearer a.b.c' }]) {
        const res = await t.app.inject({ method, url, headers, remoteAddress, ...(method === 'POST' ? { payload: {} } : {}) })
        expect(res.statusCode).toBe(401)
        expect(res.json()).toMatchObject({ success: false, error: 'unauthorized' })
      }
    })

    it.each(routes)('answers 403 to %s %s with a non-admin gateway token', async (method, url) => {
      const alice = await loginAs(t.app, 'alice')
      const res = await t.app.inject({ method, url, headers: { authorization: alice }, ...(method === 'POST' ? { payload: {} } : {}) })
      expect(res.statusCode).toBe(403)
      expect(res.json().error).toBe('forbidden')
    })

    it('serves an administrator’s gateway token and records its writes under the username', async () => {
      const root = await loginAs(t.app, 'root')
      const res = await t.app.inject({ method: 'POST', url: '/api/admin/device/add', headers: { authorization: root }, payload: { device_id: 'ad-jwt', model: 'm' } })
      expect(res.statusCode).toBe(201)
      const [entry] = (await t.admin('GET', '/api/admin/logs?source=operation&device_id=ad-jwt')).json().logs
      expect(entry.message).toMatch(/^root:/)
    })
  })

  describe('devices', () => {
    it('adds a device: 201 with the device and a token; 409 when it exists', async () => {
      const res = await t.admin('POST', '/api/admin/device/add', { device_id: 'ad-1', model: 'bot-7' })
      expect(res.statusCode).toBe(201)
      const body = res.json()
      expect(body).toMatchObject({ success: true, device: { device_id: 'ad-1', model: 'bot-7', online: false, last_online_at: null } })
      expect(typeof body.device_token).toBe('string')
      expect(body.device_token.length).toBeGreaterThanOrEqual(24)
      const again = await t.admin('POST', '/api/admin/device/add', { device_id: 'ad-1', model: 'bot-7' })
      expect(again.statusCode).toBe(409)
      expect(again.json().error).toBe('conflict')
    })

    it.each([
      [{ model: 'm' }],
      [{ device_id: 'ad-x' }],
      [{ device_id: 'bad id', model: 'm' }],
      [{ device_id: '..', model: 'm' }],
      [{ device_id: 'x'.repeat(65), model: 'm' }],
      [{ device_id: 'ad-x', model: '' }],
      [{ device_id: 'ad-x', model: 'm'.repeat(65) }],
      [{ device_id: 'ad-x', model: 'm', token: 'mine' }],
    ])('rejects the add body %j with 400', async (body) => {
      expect((await t.admin('POST', '/api/admin/device/add', body)).statusCode).toBe(400)
    })

    it('lists devices by id with limit/after paging and next_after', async () => {
      for (const id of ['pg-c', 'pg-a', 'pg-b', 'pg-B']) await t.addDevice(id)
      const all = (await t.admin('GET', '/api/admin/devices?limit=1000')).json()
      const ids = all.devices.map((d: { device_id: string }) => d.device_id)
      expect(ids).toEqual([...ids].sort((a: string, b: string) => (Buffer.from(a) < Buffer.from(b) ? -1 : 1)))
      expect(all).not.toHaveProperty('next_after')
      const page1 = (await t.admin('GET', '/api/admin/devices?limit=2&after=pg-B')).json()
      expect(page1.devices.map((d: { device_id: string }) => d.device_id)).toEqual(['pg-a', 'pg-b'])
      expect(page1.next_after).toBe('pg-b')
      const page2 = (await t.admin('GET', `/api/admin/devices?limit=2&after=${page1.next_after}`)).json()
      expect(page2.devices[0].device_id).toBe('pg-c')
      expect(all.devices[0]).toMatchObject({ device_id: expect.any(String), online: false, created_at: expect.any(Number) })
    })

    it.each(['limit=0', 'limit=1001', 'limit=abc', 'after=..', `after=${'x'.repeat(65)}`])('rejects the list query ?%s with 400', async (query) => {
      expect((await t.admin('GET', `/api/admin/devices?${query}`)).statusCode).toBe(400)
    })

    it('shows the detail: device, config, latest telemetry, queued commands and binding', async () => {
      await t.addDevice('ad-detail')
      await t.device('POST', '/v1/device/heartbeat', { device_id: 'ad-detail', firmware_version: '3.0' })
      await t.device('POST', '/v1/device/ad-detail/config', { config: { rate: 5 } })
      await t.device('POST', '/v1/device/ad-detail/telemetry', { values: { temp: 20 } })
      await t.admin('POST', '/api/admin/device/ad-detail/command', { action: 'bleep', params: { duration: 10 } })
      const res = await t.admin('GET', '/api/admin/device/ad-detail/detail')
      expect(res.statusCode).toBe(200)
      const body = res.json()
      expect(body).toMatchObject({
        success: true,
        device: { device_id: 'ad-detail', firmware_version: '3.0', online: true },
        config: { config: { rate: 5 }, version: 1 },
        latest_telemetry: { temp: { value: 20 } },
        pending_commands: [{ action: 'bleep', status: 'pending' }],
        bind: { bound: false },
      })
      expect((await t.admin('GET', '/api/admin/device/nobody/detail')).statusCode).toBe(404)
    })

    it('deletes a device with its telemetry, commands, config, logs, binding and code in one go', async () => {
      const id = 'ad-gone'
      await t.addDevice(id)
      await t.device('POST', `/v1/device/${id}/telemetry/batch`, [{ values: { a: 1, b: 2 } }, { values: { a: 3 } }])
      await t.device('POST', `/v1/device/${id}/config`, { config: { x: 1 } })
      await t.device('POST', `/v1/device/${id}/logs`, { message: 'bye' })
      await t.admin('POST', `/api/admin/device/${id}/command`, { action: 'ping', params: {} })
      const { code } = (await t.device('GET', `/v1/device/${id}/bind/code`)).json()
      await t.app.inject({ method: 'POST', url: '/v1/bind/verify', headers: CONSOLE, payload: { code, user_id: 'alice' } })
      await t.device('GET', `/v1/device/${id}/bind/code`)
      // Another device's data must survive.
      await t.addDevice('ad-stays')
      await t.device('POST', '/v1/device/ad-stays/telemetry', { values: { a: 1 } })
      await t.device('POST', '/v1/device/ad-stays/logs', { message: 'still here' })

      const res = await t.admin('POST', `/api/admin/device/${id}/delete`)
      expect(res.statusCode).toBe(200)
      expect(res.json()).toEqual({ success: true })

      const db = t.storage.db
      const count = async (table: 'platform_devices' | 'platform_commands' | 'platform_configs' | 'platform_telemetry_series' | 'platform_bindings' | 'platform_bind_codes') =>
        Number((await db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).where('device_id', '=', id).executeTakeFirstOrThrow()).n)
      for (const table of ['platform_devices', 'platform_commands', 'platform_configs', 'platform_telemetry_series', 'platform_bindings', 'platform_bind_codes'] as const) {
        expect(await count(table), table).toBe(0)
      }
      const points = await db
        .selectFrom('platform_telemetry')
        .leftJoin('platform_telemetry_series', 'platform_telemetry_series.series_id', 'platform_telemetry.series_id')
        .select('platform_telemetry_series.device_id')
        .execute()
      expect(points.filter((p) => p.device_id === null)).toEqual([]) // no orphaned points
      expect(points.filter((p) => p.device_id === 'ad-stays')).toHaveLength(1)
      const deviceLogs = await db.selectFrom('platform_logs').select('device_id').where('source', '=', 'device').execute()
      expect(deviceLogs.map((l) => l.device_id)).not.toContain(id)
      expect(deviceLogs.map((l) => l.device_id)).toContain('ad-stays')
      // Device calls now meet an unknown device; a second delete is 404.
      expect((await t.device('GET', `/v1/device/${id}`)).statusCode).toBe(404)
      expect((await t.admin('POST', `/api/admin/device/${id}/delete`)).statusCode).toBe(404)
      // The id can be added afresh with nothing left over.
      await t.addDevice(id)
      expect((await t.admin('GET', `/api/admin/device/${id}/detail`)).json()).toMatchObject({ latest_telemetry: {}, pending_commands: [], bind: { bound: false }, config: { version: 0 } })
    })
  })

  describe('delete racing telemetry', () => {
    it('never leaves series or points of a device deleted while its batches arrive (the race, 30 times)', async () => {
      const db = t.storage.db
      for (let round = 0; round < 30; round++) {
        const id = `ad-race-${round}`
        await t.addDevice(id)
        const batches = Array.from({ length: 4 }, (_, k) => t.device('POST', `/v1/device/${id}/telemetry/batch`, [{ values: { [`k${k}`]: k } }, { values: { a: round } }]))
        const [deleted, ...stored] = await Promise.all([t.admin('POST', `/api/admin/device/${id}/delete`), ...batches])
        expect(deleted!.statusCode).toBe(200)
        // Each batch was stored before the delete (and deleted with it) or met an unknown device.
        for (const res of stored) expect([200, 404]).toContain(res.statusCode)
        const series = await db.selectFrom('platform_telemetry_series').select('series_id').where('device_id', '=', id).execute()
        expect(series, `round ${round}`).toEqual([])
      }
      const orphans = await db
        .selectFrom('platform_telemetry')
        .leftJoin('platform_telemetry_series', 'platform_telemetry_series.series_id', 'platform_telemetry.series_id')
        .select('platform_telemetry.ts')
        .where('platform_telemetry_series.device_id', 'is', null)
        .execute()
      expect(orphans).toEqual([])
    })
  })

  describe('delete racing device logs', () => {
    it('never leaves log entries of a device deleted while its logs arrive (the race, 30 times)', async () => {
      const db = t.storage.db
      const errorsBefore = (await t.admin('GET', '/api/admin/summary')).json().errors_24h
      for (let round = 0; round < 30; round++) {
        const id = `ad-log-race-${round}`
        await t.addDevice(id)
        const posts = [
          t.device('POST', `/v1/device/${id}/logs`, { message: `one ${round}` }),
          t.device('POST', `/v1/device/${id}/logs/batch`, [{ message: 'a' }, { level: 'warn', message: 'b' }]),
          // A device error: counted in the summary, written in a transaction.
          t.device('POST', `/v1/device/${id}/logs/batch`, [{ level: 'error', message: 'c' }]),
          t.device('POST', `/v1/device/${id}/logs`, { level: 'debug', tag: 'x', message: 'two' }),
        ]
        const [deleted, ...stored] = await Promise.all([t.admin('POST', `/api/admin/device/${id}/delete`), ...posts])
        expect(deleted!.statusCode).toBe(200)
        // Each post was stored before the delete (and deleted with it) or met an unknown device.
        for (const res of stored) expect([200, 404]).toContain(res.statusCode)
        const left = await db.selectFrom('platform_logs').select('message').where('source', '=', 'device').where('device_id', '=', id).execute()
        expect(left, `round ${round}`).toEqual([])
      }
      // The error entries deleted with their device left the 24 h count as it was.
      expect((await t.admin('GET', '/api/admin/summary')).json().errors_24h).toBe(errorsBefore)
    })
  })

  describe('summary', () => {
    it('counts devices online and offline, commands by state, telemetry and errors of the last 24 h', async () => {
      const before = (await t.admin('GET', '/api/admin/summary')).json()
      await t.addDevice('sm-1')
      await t.device('POST', '/v1/device/heartbeat', { device_id: 'sm-1' })
      await t.addDevice('sm-2')
      await t.device('POST', '/v1/device/sm-1/telemetry', { values: { a: 1, b: 2 } })
      await t.device('POST', '/v1/device/sm-1/logs/batch', [{ level: 'error', message: 'x' }, { level: 'warn', message: 'y' }])
      await t.admin('POST', '/api/admin/device/sm-1/command', { action: 'ping', params: {} })
      const after = (await t.admin('GET', '/api/admin/summary')).json()
      expect(after.success).toBe(true)
      expect(after.devices.total - before.devices.total).toBe(2)
      expect(after.devices.online - before.devices.online).toBe(1)
      expect(after.devices.offline - before.devices.offline).toBe(1)
      expect(after.commands.pending - before.commands.pending).toBe(1)
      expect(Object.keys(after.commands).sort()).toEqual(['delivered', 'done', 'expired', 'failed', 'pending'])
      expect(after.telemetry_24h - before.telemetry_24h).toBe(2)
      expect(after.errors_24h - before.errors_24h).toBe(1)
    })
  })

  describe('operation log', () => {
    it('records every admin write', async () => {
      const tags = async () => (await t.admin('GET', '/api/admin/logs?source=operation&device_id=op-1&limit=1000')).json().logs.map((l: { tag: string }) => l.tag)
      await t.addDevice('op-1')
      await t.admin('POST', '/api/admin/device/op-1/command', { action: 'ping', params: {} })
      await t.admin('POST', '/api/admin/device/op-1/expression', { expression: 'happy' })
      await t.admin('POST', '/api/admin/device/op-1/hid', { action: 'hid_release', params: {} })
      await t.admin('POST', '/api/admin/device/op-1/token')
      await t.admin('POST', '/api/admin/commands/clear', { device_id: 'op-1' })
      await t.admin('POST', '/api/admin/logs/clear', { device_id: 'op-1', source: 'device' })
      await t.admin('POST', '/api/admin/device/op-1/delete')
      expect((await tags()).reverse()).toEqual([
        'device.add',
        'command.create',
        'command.create',
        'command.create',
        'device.token',
        'commands.clear',
        'logs.clear',
        'device.delete',
      ])
    })

    it('does not record reads or refused writes', async () => {
      const count = async () => (await t.admin('GET', '/api/admin/logs?source=operation&limit=1000')).json().logs.length
      const before = await count()
      await t.admin('GET', '/api/admin/summary')
      await t.admin('GET', '/api/admin/devices')
      await t.admin('POST', '/api/admin/device/add', { device_id: 'ad-1', model: 'dup' })
      await t.admin('POST', '/api/admin/device/nobody/command', { action: 'ping', params: {} })
      await t.admin('POST', '/api/admin/device/ad-1/command', { action: 'bleep', params: {} })
      expect(await count()).toBe(before)
    })
  })
})
