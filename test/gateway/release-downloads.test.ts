import { mkdtempSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { AddressInfo } from 'node:net'
import type { CompiledQuery } from 'kysely'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { DIALECTS, testDatabase, type TestDatabase } from '../helpers/dialects.js'
import { loginAs, startTestApp, type TestApp } from '../helpers/test-app.js'
import { signedReleases } from '../helpers/signed-releases.js'

const { rootPubkey, release } = signedReleases({
  version: { major: 2, minor: 1, revision: 0 },
  payload: (build) => Buffer.from(`rollout firmware build ${build} `.repeat(4000)),
})
const ACTIVE_IMAGE = '/api/v1/firmware/slave/system.bin'
const ACTIVE_MANIFEST = '/api/v1/firmware/slave/manifest.json'
const imageOf = (id: string) => `/api/v1/firmware/slave/releases/${id}/system.bin`
const manifestOf = (id: string) => `/api/v1/firmware/slave/releases/${id}/manifest.json`

/** Contract §14: a published or active release's manifest and image by id, with §6's rules. */
describe.each(DIALECTS)('downloads of a release by id on %s', (dialect) => {
  let database: TestDatabase
  let a: TestApp
  let base: string
  let admin: string
  // r1 is activated first; r2 and r3 stay published until the activation test.
  const [r1, r2, r3] = [release(1), release(2), release(3)]
  const id = (r: typeof r1) => r.manifest.release
  const etagOf = (r: typeof r1) => `"${r.manifest.system.sha256}"`

  /** Statements that read the image column, counted on the instance's query executor. */
  const imageReads = (t: TestApp) => {
    const spy = vi.spyOn(t.storage.db.getExecutor(), 'executeQuery')
    return {
      count: () => spy.mock.calls.filter(([query]) => /select.*"image"/i.test((query as CompiledQuery).sql)).length,
      restore: () => spy.mockRestore(),
    }
  }
  const activate = async (t: TestApp, r: typeof r1) => {
    const res = await t.app.inject({ method: 'POST', url: `/api/v1/admin/firmware/slave/releases/${id(r)}/activate`, headers: { authorization: admin } })
    expect(res.statusCode).toBe(200)
  }
  const downloadCount = async (r: typeof r1) =>
    (await a.storage.db.selectFrom('firmware_releases').select('download_count').where('release_id', '=', id(r)).executeTakeFirstOrThrow()).download_count
  /** A request whose path is sent exactly as written (fetch, inject and URL strings fold dot-segments out of it). */
  const raw = (method: string, url: string) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: (a.app.server.address() as AddressInfo).port, path: url, method }, (res) => {
        let body = ''
        res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
      })
      req.on('error', reject)
      req.end()
    })

  beforeAll(async () => {
    database = testDatabase(dialect, path.join(mkdtempSync(path.join(tmpdir(), 'fg-reldl-')), 'fg.db'))
    a = await startTestApp(dialect, { FIRMWARE_ROOT_PUBKEY: rootPubkey }, { database, downloadFlushMs: 20 })
    await a.app.listen({ port: 0, host: '127.0.0.1' })
    base = `http://127.0.0.1:${(a.app.server.address() as AddressInfo).port}`
    admin = await loginAs(a.app, 'admin', 'admin')
    for (const r of [r1, r2, r3]) {
      const form = new FormData()
      form.append('image', new Blob([r.image]), 'system.bin')
      form.append('manifest', JSON.stringify(r.manifest))
      const res = await fetch(`${base}/api/v1/admin/firmware/slave/releases`, { method: 'POST', body: form, headers: { authorization: admin } })
      expect(res.status, await res.clone().text()).toBe(201)
    }
    await activate(a, r1)
  })
  afterAll(async () => {
    await a?.app.close()
    await database?.cleanup()
  })

  it('serves a published release that is not active: its manifest and its image, without credentials', async () => {
    const manifest = await a.app.inject({ url: manifestOf(id(r2)) })
    expect(manifest.statusCode).toBe(200)
    expect(manifest.json()).toEqual(r2.manifest)
    const image = await a.app.inject({ url: imageOf(id(r2)) })
    expect(image.statusCode).toBe(200)
    expect(image.headers['content-type']).toBe('application/octet-stream')
    expect(image.headers.etag).toBe(etagOf(r2))
    expect(Number(image.headers['content-length'])).toBe(r2.image.length)
    expect(image.rawPayload.equals(r2.image)).toBe(true)
    // The active release by its id is the same as the active URL.
    const active = await a.app.inject({ url: imageOf(id(r1)) })
    expect(active.headers.etag).toBe((await a.app.inject({ method: 'HEAD', url: ACTIVE_IMAGE })).headers.etag)
    expect(active.rawPayload.equals(r1.image)).toBe(true)
  })

  it('answers HEAD, If-None-Match 304, a resumable Range 206 and 416 beyond the image', async () => {
    const { image } = r2
    const url = `${base}${imageOf(id(r2))}`
    const head = await fetch(url, { method: 'HEAD' })
    expect(head.status).toBe(200)
    expect(Number(head.headers.get('content-length'))).toBe(image.length)
    expect(head.headers.get('etag')).toBe(etagOf(r2))
    expect(head.headers.get('content-type')).toBe('application/octet-stream')
    const headRange = await fetch(url, { method: 'HEAD', headers: { range: 'bytes=10-19' } })
    expect(headRange.status).toBe(206)
    expect(headRange.headers.get('content-length')).toBe('10')

    for (const ifNoneMatch of [etagOf(r2), `W/${etagOf(r2)}`, `"other", ${etagOf(r2)}`, '*']) {
      const cached = await fetch(url, { headers: { 'if-none-match': ifNoneMatch } })
      expect(cached.status, ifNoneMatch).toBe(304)
      expect(cached.headers.get('etag')).toBe(etagOf(r2))
    }
    // Every body is read: the server waits for an unread one at close.
    const changed = await fetch(url, { headers: { 'if-none-match': etagOf(r1) } })
    expect(changed.status).toBe(200)
    expect(Buffer.from(await changed.arrayBuffer()).equals(image)).toBe(true)

    const part1 = await fetch(url, { headers: { range: 'bytes=0-999' } })
    expect(part1.status).toBe(206)
    expect(part1.headers.get('content-range')).toBe(`bytes 0-999/${image.length}`)
    expect(part1.headers.get('content-length')).toBe('1000')
    const part2 = await fetch(url, { headers: { range: 'bytes=1000-' } })
    expect(part2.status).toBe(206)
    expect(Buffer.concat([Buffer.from(await part1.arrayBuffer()), Buffer.from(await part2.arrayBuffer())]).equals(image)).toBe(true)
    const suffix = await fetch(url, { headers: { range: 'bytes=-16' } })
    expect(Buffer.from(await suffix.arrayBuffer()).equals(image.subarray(image.length - 16))).toBe(true)

    const beyond = await fetch(url, { headers: { range: `bytes=${image.length}-` } })
    expect(beyond.status).toBe(416)
    expect(beyond.headers.get('content-range')).toBe(`bytes */${image.length}`)
    expect(await beyond.json()).toMatchObject({ success: false, error: 'range_not_satisfiable' })
  })

  it("counts full downloads and ranges from byte 0 into the release's download_count, nothing else", async () => {
    // Downloads are counted in memory and written every 20 ms here: first let what the earlier
    // tests counted be written (two equal reads 300 ms apart), so it is not taken for this test's.
    let last = ''
    await expect
      .poll(
        async () => {
          const now = JSON.stringify([await downloadCount(r1), await downloadCount(r2)])
          const settled = now === last
          last = now
          return settled
        },
        { timeout: 15_000, interval: 300 },
      )
      .toBe(true)
    const [settledR1, settledR2] = JSON.parse(last) as [number, number]
    const before = { r1: settledR1, r2: settledR2 }
    await a.app.inject({ url: imageOf(id(r2)) })
    await a.app.inject({ url: imageOf(id(r2)), headers: { range: 'bytes=0-9' } })
    await a.app.inject({ url: imageOf(id(r2)), headers: { range: 'bytes=10-' } })
    await a.app.inject({ method: 'HEAD', url: imageOf(id(r2)) })
    await a.app.inject({ url: imageOf(id(r2)), headers: { 'if-none-match': etagOf(r2) } })
    await a.app.inject({ url: manifestOf(id(r2)) })
    // Counted in memory and written aggregated (no write per anonymous request).
    await expect.poll(() => downloadCount(r2), { timeout: 10_000 }).toBe(before.r2 + 2)
    expect(await downloadCount(r1)).toBe(before.r1)
  })

  it('answers 400 with the error body for a malformed release id, 404 for an unknown one', async () => {
    for (const url of [imageOf, manifestOf]) {
      for (const bad of ['a%2Fb', '..%2F..%2Fetc', 'x'.repeat(65), 'a%00b', 'b%5Cc', 'a%20b']) {
        for (const method of ['GET', 'HEAD']) {
          const res = await a.app.inject({ method: method as 'GET', url: url(bad) })
          expect(res.statusCode, `${method} ${url(bad)}`).toBe(400)
          if (method === 'GET') expect(res.json()).toMatchObject({ success: false, error: 'bad_request', message: expect.any(String) })
        }
      }
      // Sent as is over a socket (inject and fetch fold dot-segments out of the path first).
      for (const bad of ['..', '.', '%2e%2e', '%2E', '%2e.', 'a%2Fb', 'x'.repeat(65)]) {
        const res = await raw('GET', url(bad))
        expect(res.status, `${url(bad)} ${res.body}`).toBe(400)
        expect(JSON.parse(res.body)).toMatchObject({ success: false, error: 'bad_request' })
      }
      expect((await a.app.inject({ url: url('x'.repeat(64)) })).statusCode).toBe(404)
      const unknown = await a.app.inject({ url: url('no-such-release') })
      expect(unknown.statusCode).toBe(404)
      expect(unknown.json()).toMatchObject({ success: false, error: 'not_found', message: expect.any(String) })
      expect((await a.app.inject({ method: 'HEAD', url: url('no-such-release') })).statusCode).toBe(404)
    }
  })

  it('reads each of two releases downloaded at once from the database once, neither again under steady load, and drops images no longer used', async () => {
    // A second instance on the same database: its cache is cold.
    const b = await startTestApp(dialect, { FIRMWARE_ROOT_PUBKEY: rootPubkey }, { database })
    const reads = imageReads(b)
    try {
      const heads = await Promise.all([
        ...Array.from({ length: 3 }, () => b.app.inject({ method: 'HEAD', url: imageOf(id(r2)) })),
        ...Array.from({ length: 3 }, () => b.app.inject({ url: imageOf(id(r2)), headers: { 'if-none-match': etagOf(r2) } })),
      ])
      expect(heads.map((res) => res.statusCode)).toEqual([200, 200, 200, 304, 304, 304])
      expect(reads.count()).toBe(0)

      // The fleet on the active release, a rollout's machines on r2, and some fetching r1 by id.
      const downloads = await Promise.all([
        ...Array.from({ length: 10 }, () => b.app.inject({ url: ACTIVE_IMAGE })),
        ...Array.from({ length: 10 }, () => b.app.inject({ url: imageOf(id(r2)) })),
        ...Array.from({ length: 5 }, () => b.app.inject({ url: imageOf(id(r1)), headers: { range: 'bytes=100-' } })),
      ])
      for (const res of downloads.slice(0, 10)) expect(res.rawPayload.equals(r1.image)).toBe(true)
      for (const res of downloads.slice(10, 20)) expect(res.rawPayload.equals(r2.image)).toBe(true)
      for (const res of downloads.slice(20)) expect(res.rawPayload.equals(r1.image.subarray(100))).toBe(true)
      expect(reads.count()).toBe(2)

      // One download at a time, alternating: both copies stay between requests.
      for (let i = 0; i < 6; i++) {
        const res = await b.app.inject({ url: i % 2 ? imageOf(id(r2)) : ACTIVE_IMAGE })
        expect(res.statusCode).toBe(200)
      }
      expect(reads.count()).toBe(2)

      // Done downloads hold nothing: a third image pushes the least recently used one (r1) out.
      expect((await b.app.inject({ url: imageOf(id(r3)) })).rawPayload.equals(r3.image)).toBe(true)
      expect(reads.count()).toBe(3)
      expect((await b.app.inject({ url: imageOf(id(r2)) })).rawPayload.equals(r2.image)).toBe(true)
      expect(reads.count()).toBe(3)
      expect((await b.app.inject({ url: ACTIVE_IMAGE })).rawPayload.equals(r1.image)).toBe(true)
      expect(reads.count()).toBe(4)
    } finally {
      reads.restore()
      await b.app.close()
    }
  })

  it('documents both routes in /openapi.json with their release_id path parameter', async () => {
    const doc = (await a.app.inject('/openapi.json')).json() as {
      paths: Record<string, Record<string, { parameters?: { name: string; in: string; required?: boolean }[] }>>
    }
    for (const file of ['manifest.json', 'system.bin']) {
      const operations = doc.paths[`/api/v1/firmware/slave/releases/{release_id}/${file}`]
      expect(operations, file).toBeDefined()
      expect(operations!.get?.parameters, file).toContainEqual(expect.objectContaining({ name: 'release_id', in: 'path', required: true }))
    }
  })

  it('keeps serving a release by id whatever is activated, here or on another instance', async () => {
    const b = await startTestApp(dialect, { FIRMWARE_ROOT_PUBKEY: rootPubkey }, { database })
    try {
      for (const t of [a, b]) expect((await t.app.inject({ url: imageOf(id(r2)) })).rawPayload.equals(r2.image)).toBe(true)
      await activate(a, r3)
      for (const t of [a, b]) {
        const active = await t.app.inject({ url: ACTIVE_IMAGE })
        expect(active.headers.etag).toBe(etagOf(r3))
        expect(active.rawPayload.equals(r3.image)).toBe(true)
        expect((await t.app.inject({ url: ACTIVE_MANIFEST })).json()).toEqual(r3.manifest)
        // r2 and the formerly active r1, both published now: unchanged.
        for (const r of [r1, r2]) {
          const image = await t.app.inject({ url: imageOf(id(r)) })
          expect(image.headers.etag).toBe(etagOf(r))
          expect(image.rawPayload.equals(r.image)).toBe(true)
          expect((await t.app.inject({ url: manifestOf(id(r)) })).json()).toEqual(r.manifest)
        }
      }
    } finally {
      await b.app.close()
    }
  })
})
