import { mkdtempSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openStorage } from '../../src/storage/storage.js'
import { DIALECTS, testDatabase, type TestDatabase } from '../helpers/dialects.js'
import { signedReleases } from '../helpers/signed-releases.js'
import { loginAs, startTestApp, type TestApp } from '../helpers/test-app.js'
import { WriteCounter } from '../helpers/write-counter.js'

const { rootPubkey, release } = signedReleases({ version: { major: 1, minor: 2, revision: 0 }, payload: (build) => Buffer.from(`anonymous ${build} `.repeat(500)) })
const N = 60

/** Review finding: requests anyone can send without credentials must not each make the database write. */
describe.each(DIALECTS)('anonymous requests and database writes on %s', (dialect) => {
  let database: TestDatabase
  let t: TestApp
  const writes = new WriteCounter()
  const r = release(7)
  beforeAll(async () => {
    // A file on SQLite: the last test reopens it after the app closed.
    database = testDatabase(dialect, path.join(mkdtempSync(path.join(tmpdir(), 'fg-anon-')), 'fg.db'))
    // A flush interval longer than the test: only the close writes the counts.
    t = await startTestApp(dialect, { FIRMWARE_ROOT_PUBKEY: rootPubkey }, { database, wrapDb: writes.wrap, downloadFlushMs: 3_600_000 })
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    const admin = await loginAs(t.app, 'admin', 'admin')
    const form = new FormData()
    form.append('image', new Blob([r.image]), 'system.bin')
    form.append('manifest', JSON.stringify(r.manifest))
    const base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`
    expect((await fetch(`${base}/api/v1/admin/firmware/slave/releases`, { method: 'POST', body: form, headers: { authorization: admin } })).status).toBe(201)
    const activated = await t.app.inject({ method: 'POST', url: `/api/v1/admin/firmware/slave/releases/${r.manifest.release}/activate`, headers: { authorization: admin } })
    expect(activated.statusCode).toBe(200)
  })
  afterAll(async () => {
    await database?.cleanup()
  })

  it('counts firmware downloads in memory: N anonymous downloads, no write until the aggregated one', async () => {
    writes.byTable.clear()
    for (let i = 0; i < N; i++) {
      const url = i % 2 === 0 ? '/api/v1/firmware/slave/system.bin' : `/api/v1/firmware/slave/releases/${r.manifest.release}/system.bin`
      expect((await t.app.inject({ url, remoteAddress: `10.93.0.${i}` })).statusCode).toBe(200)
      expect((await t.app.inject({ url: '/api/v1/firmware/slave/manifest.json' })).statusCode).toBe(200)
    }
    expect(writes.count('firmware_releases', 'audit_log')).toBe(0)
  })

  it('refuses anonymous binding tries before counting them: no write however many', async () => {
    writes.byTable.clear()
    for (let i = 0; i < N; i++) {
      const headers = [{}, { authorization: 'Bearer a.b.c' }, { authorization: 'Basic eDp5' }][i % 3]!
      const res = await t.app.inject({ method: 'POST', url: '/v1/bind/verify', headers, payload: { code: '123456' }, remoteAddress: '10.93.1.1' })
      expect(res.statusCode).toBe(401)
      expect(res.json()).toMatchObject({ success: false, error: 'unauthorized' })
    }
    expect([...writes.byTable.values()].reduce((a, b) => a + b, 0)).toBe(0)
    // An authenticated try still counts (contract §7's 10 a minute per address).
    const alice = await loginAs(t.app, 'alice')
    writes.byTable.clear()
    expect((await t.app.inject({ method: 'POST', url: '/v1/bind/verify', headers: { authorization: alice }, payload: { code: '123456' }, remoteAddress: '10.93.1.1' })).statusCode).toBe(400)
    // Its hit (and now and then a prune of old hits).
    expect(writes.count('rate_hits')).toBeGreaterThanOrEqual(1)
  })

  it('writes the counted downloads in one statement when the app closes', async () => {
    writes.byTable.clear()
    await t.app.close()
    expect(writes.count('firmware_releases')).toBe(1)
    const storage = await openStorage(database.target)
    try {
      const row = await storage.db.selectFrom('firmware_releases').select('download_count').where('release_id', '=', r.manifest.release).executeTakeFirstOrThrow()
      expect(Number(row.download_count)).toBe(N)
    } finally {
      await storage.close()
    }
  })
})
