import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { AddressInfo } from 'node:net'
import type { CompiledQuery } from 'kysely'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { DIALECTS, testDatabase, type TestDatabase } from '../helpers/dialects.js'
import { loginAs, startTestApp, type TestApp } from '../helpers/test-app.js'
import { signedReleases } from '../helpers/signed-releases.js'

const { rootPubkey, release } = signedReleases({ version: { major: 1, minor: 0, revision: 0 }, payload: (build) => Buffer.from(`firmware build ${build} `.repeat(5000)) })
const IMAGE = '/api/v1/firmware/slave/system.bin'

describe.each(DIALECTS)('firmware downloads from one cached image on %s', (dialect) => {
  let database: TestDatabase
  let a: TestApp
  let b: TestApp
  let admin: string
  const releases = [release(1), release(2)]

  /** Statements that read the image column, counted on the instance's query executor. */
  const imageReads = (t: TestApp) => {
    const executor = t.storage.db.getExecutor()
    const spy = vi.spyOn(executor, 'executeQuery')
    return {
      count: () => spy.mock.calls.filter(([query]) => /select.*"image"/i.test((query as CompiledQuery).sql)).length,
      restore: () => spy.mockRestore(),
    }
  }

  const upload = async (t: TestApp, r: ReturnType<typeof release>) => {
    const base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`
    const form = new FormData()
    form.append('image', new Blob([r.image]), 'system.bin')
    form.append('manifest', JSON.stringify(r.manifest))
    const res = await fetch(`${base}/api/v1/admin/firmware/slave/releases`, { method: 'POST', body: form, headers: { authorization: admin } })
    expect(res.status, await res.clone().text()).toBe(201)
    const activate = await t.app.inject({ method: 'POST', url: `/api/v1/admin/firmware/slave/releases/${r.manifest.release}/activate`, headers: { authorization: admin } })
    expect(activate.statusCode).toBe(200)
  }

  beforeAll(async () => {
    database = testDatabase(dialect, path.join(mkdtempSync(path.join(tmpdir(), 'fg-dl-')), 'fg.db'))
    const env = { FIRMWARE_ROOT_PUBKEY: rootPubkey }
    a = await startTestApp(dialect, env, { database })
    b = await startTestApp(dialect, env, { database })
    await a.app.listen({ port: 0, host: '127.0.0.1' })
    admin = await loginAs(a.app, 'admin', 'admin')
    await upload(a, releases[0]!)
  })
  afterAll(async () => {
    await a?.app.close()
    await b?.app.close()
    await database?.cleanup()
  })

  it('reads the image from the database once for many concurrent downloads, never for HEAD or 304', async () => {
    const reads = imageReads(b)
    try {
      const etag = `"${releases[0]!.manifest.system.sha256}"`
      const heads = await Promise.all(Array.from({ length: 5 }, () => b.app.inject({ method: 'HEAD', url: IMAGE })))
      for (const head of heads) expect(Number(head.headers['content-length'])).toBe(releases[0]!.image.length)
      const conditional = await Promise.all(Array.from({ length: 5 }, () => b.app.inject({ url: IMAGE, headers: { 'if-none-match': etag } })))
      for (const res of conditional) expect(res.statusCode).toBe(304)
      expect(reads.count()).toBe(0)

      const downloads = await Promise.all(Array.from({ length: 20 }, () => b.app.inject({ url: IMAGE })))
      for (const res of downloads) expect(res.rawPayload.equals(releases[0]!.image)).toBe(true)
      const ranged = await b.app.inject({ url: IMAGE, headers: { range: 'bytes=100-199' } })
      expect(ranged.statusCode).toBe(206)
      expect(ranged.rawPayload.equals(releases[0]!.image.subarray(100, 200))).toBe(true)
      expect(reads.count()).toBe(1)
    } finally {
      reads.restore()
    }
  })

  it('serves a release activated on another instance at the next request', async () => {
    expect((await b.app.inject({ url: IMAGE })).rawPayload.equals(releases[0]!.image)).toBe(true)
    await upload(a, releases[1]!)
    const next = await b.app.inject({ url: IMAGE })
    expect(next.headers.etag).toBe(`"${releases[1]!.manifest.system.sha256}"`)
    expect(next.rawPayload.equals(releases[1]!.image)).toBe(true)
  })
})
