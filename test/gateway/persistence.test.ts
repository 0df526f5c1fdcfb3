import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { DIALECTS, testDatabase } from '../helpers/dialects.js'
import { startGatewayApp } from './helpers/gateway-app.js'
import { RawDevice } from './helpers/raw-device.js'

describe.each(DIALECTS)('device records across restarts on %s', (dialect) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'fleetgate-gw-'))
  const database = testDatabase(dialect, path.join(dir, 'fleetgate.db'))
  afterAll(async () => {
    await database.cleanup()
    rmSync(dir, { recursive: true, force: true })
  })

  it('closes links with 1012 on shutdown, writes the last heartbeat, and shows the device not alive after a restart', async () => {
    // A long flush period: only the shutdown can have written the heartbeat.
    const first = await startGatewayApp(dialect, {}, { database, deviceLink: { statusFlushMs: 600_000 } })
    const device = await RawDevice.link(first.linkUrl, { device_id: 'pnp-persist', hostname: 'cell-7', version: '3.1.0', ip: '10.0.0.7' })
    device.heartbeat({ state: 'idle', temperature: 38 })
    const root = await first.auth('root')
    await expect
      .poll(async () => (await first.app.inject({ method: 'GET', url: '/api/v1/devices/pnp-persist/status', headers: { authorization: root } })).json().status)
      .toEqual({ state: 'idle', temperature: 38 })
    const stored = await first.storage.db.selectFrom('devices').select(['last_status', 'link_instance']).where('device_id', '=', 'pnp-persist').executeTakeFirstOrThrow()
    expect(stored).toMatchObject({ last_status: '{}', link_instance: expect.any(String) })
    await first.close()
    expect((await device.closed).code).toBe(1012)

    const second = await startGatewayApp(dialect, {}, { database })
    try {
      const res = await second.app.inject({ method: 'GET', url: '/api/v1/devices/pnp-persist', headers: { authorization: await second.auth('root') } })
      expect(res.json().device).toEqual({
        device_id: 'pnp-persist',
        labels: {},
        rated_cph: null,
        hostname: 'cell-7',
        ip: '10.0.0.7',
        version: '3.1.0',
        connect_time: expect.any(Number),
        last_heartbeat: expect.any(Number),
        last_status: { state: 'idle', temperature: 38 },
        messages_sent: 0,
        messages_received: 0,
        alive: false,
        registered: false,
        connected: false,
      })
      // The key survived too.
      const intruder = await RawDevice.open(second.linkUrl)
      await expect(intruder.register({ device_id: 'pnp-persist', key: 'not-the-original-key' })).rejects.toThrow(/4401/)
      const back = await RawDevice.link(second.linkUrl, { device_id: 'pnp-persist' })
      await back.close()
    } finally {
      await second.close()
    }
  })

  it('writes heartbeats to the database periodically, not only at shutdown', async () => {
    const gw = await startGatewayApp(dialect, {}, { database, deviceLink: { statusFlushMs: 50 } })
    try {
      const device = await RawDevice.link(gw.linkUrl, { device_id: 'pnp-flush' })
      device.heartbeat({ n: 1 })
      const stored = () => gw.storage.db.selectFrom('devices').select('last_status').where('device_id', '=', 'pnp-flush').executeTakeFirstOrThrow()
      await expect.poll(async () => JSON.parse((await stored()).last_status)).toEqual({ n: 1 })
      await device.close()
    } finally {
      await gw.close()
    }
  })
})
