import { request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { certifySigningKey, generateFirmwareKeys, generateP256KeyPair, publicKeyPem } from '../../src/firmware/firmware-keys.js'
import { signImage, type SignImageOptions } from '../../src/firmware/sign-image.js'
import { DIALECTS } from '../helpers/dialects.js'
import { loginAs, startTestApp, type TestApp } from '../helpers/test-app.js'

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const json = async (res: Response | Promise<Response>): Promise<any> => (await res).json()

const keys = generateFirmwareKeys()
const product = { magic: 'PNP-SLAVE', hw_version: 3, fw_version: 7, git_sha: 'abc1234', timestamp: '2026-11-01T12:00:00Z' }

const made = new Map<number, ReturnType<typeof signImage>>()
/** ECDSA signatures are randomised: a build is signed once so every use sees the same bytes. */
function makeRelease(build: number, overrides?: Partial<SignImageOptions>) {
  if (!overrides && made.has(build)) return made.get(build)!
  const release = signImage({
    payload: Buffer.from(`motion controller firmware build ${build} `.repeat(200)),
    version: { major: 1, minor: 4, revision: 2, build_num: build },
    product,
    signingKey: keys.signing.privateKey,
    signerCert: keys.signerCert,
    release: `r-1.4.2-${build}`,
    ...overrides,
  })
  if (!overrides) made.set(build, release)
  return release
}

describe.each(DIALECTS)('firmware releases over HTTP on %s', (dialect) => {
  let t: TestApp
  let base: string
  let admin: string
  let alice: string

  const upload = (image: Buffer, manifest: unknown, auth = admin, manifestAsFile = false) => {
    const form = new FormData()
    form.append('image', new Blob([image]), 'system.bin')
    const text = typeof manifest === 'string' ? manifest : JSON.stringify(manifest)
    if (manifestAsFile) form.append('manifest', new Blob([text]), 'manifest.json')
    else form.append('manifest', text)
    return fetch(`${base}/api/v1/admin/firmware/slave/releases`, { method: 'POST', body: form, headers: { authorization: auth } })
  }
  const activate = (id: string, auth = admin) =>
    fetch(`${base}/api/v1/admin/firmware/slave/releases/${id}/activate`, { method: 'POST', headers: { authorization: auth } })

  beforeAll(async () => {
    t = await startTestApp(dialect, { FIRMWARE_ROOT_PUBKEY: publicKeyPem(keys.root.publicKey), FIRMWARE_MAX_BYTES: '65536' }, { downloadFlushMs: 20 })
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`
    admin = await loginAs(t.app, 'admin', 'admin')
    alice = await loginAs(t.app, 'alice')
  })
  afterAll(() => t.close())

  it('has no active release at first: manifest and image answer 404', async () => {
    expect((await fetch(`${base}/api/v1/firmware/slave/manifest.json`)).status).toBe(404)
    expect((await fetch(`${base}/api/v1/firmware/slave/system.bin`)).status).toBe(404)
  })

  it('publishes a valid signed image: 201 with its id and image_version, listed as published', async () => {
    const { image, manifest } = makeRelease(100)
    const res = await upload(image, manifest)
    expect(res.status).toBe(201)
    expect(await json(res)).toEqual({ success: true, release_id: 'r-1.4.2-100', image_version: 100 })
    const list = await json(fetch(`${base}/api/v1/admin/firmware/slave/releases`, { headers: { authorization: admin } }))
    expect(list.releases[0]).toMatchObject({
      release_id: 'r-1.4.2-100',
      image_version: 100,
      display_version: '1.4.2+100',
      state: 'published',
      size: image.length,
      sha256: manifest.system.sha256,
      created_by: 'admin',
    })
  })

  it('accepts the manifest as a file part too', async () => {
    const { image, manifest } = makeRelease(101)
    expect((await upload(image, manifest, admin, true)).status).toBe(201)
  })

  it('refuses a second upload with the same release id: 409', async () => {
    const { image, manifest } = makeRelease(100)
    const res = await upload(image, manifest)
    expect(res.status).toBe(409)
    expect((await json(res)).error).toBe('conflict')
  })

  it('rejects a tampered image with 422 and every reason, storing nothing', async () => {
    const { image, manifest } = makeRelease(102)
    const tampered = Buffer.from(image)
    tampered[100] = tampered[100]! ^ 0xff
    const res = await upload(tampered, manifest)
    expect(res.status).toBe(422)
    const body = await json(res)
    expect(body).toMatchObject({ success: false, error: 'invalid_firmware' })
    expect(body.reasons.length).toBeGreaterThanOrEqual(2)
    expect(body.reasons.join('\n')).toMatch(/sha-?256/i)
    const row = await t.storage.db.selectFrom('firmware_releases').select('release_id').where('release_id', '=', 'r-1.4.2-102').executeTakeFirst()
    expect(row).toBeUndefined()
  })

  it('rejects an image signed by a key the root never certified', async () => {
    const rogue = generateP256KeyPair()
    const otherRoot = generateP256KeyPair()
    const { image, manifest } = makeRelease(103, { signingKey: rogue.privateKey, signerCert: certifySigningKey(otherRoot.privateKey, rogue.publicKey) })
    const res = await upload(image, manifest)
    expect(res.status).toBe(422)
    expect((await json(res)).reasons.join('\n')).toMatch(/signer|root|certif/i)
  })

  it('answers 400 without an image or a manifest, 422 for a manifest that is not JSON, 415 for a JSON body', async () => {
    const { image } = makeRelease(104)
    const noManifest = new FormData()
    noManifest.append('image', new Blob([image]), 'system.bin')
    const r1 = await fetch(`${base}/api/v1/admin/firmware/slave/releases`, { method: 'POST', body: noManifest, headers: { authorization: admin } })
    expect(r1.status).toBe(400)
    const r2 = await upload(image, '{not json')
    expect(r2.status).toBe(422)
    const r3 = await fetch(`${base}/api/v1/admin/firmware/slave/releases`, {
      method: 'POST',
      body: '{}',
      headers: { authorization: admin, 'content-type': 'application/json' },
    })
    expect(r3.status).toBe(415)
  })

  it('answers 413 for an image above FIRMWARE_MAX_BYTES', async () => {
    const res = await upload(Buffer.alloc(70_000, 1), makeRelease(105).manifest)
    expect(res.status).toBe(413)
    expect((await json(res)).error).toBe('payload_too_large')
  })

  it('keeps uploads, lists and activation to administrators', async () => {
    const { image, manifest } = makeRelease(106)
    expect((await upload(image, manifest, alice)).status).toBe(403)
    expect((await upload(image, manifest, '')).status).toBe(401)
    expect((await fetch(`${base}/api/v1/admin/firmware/slave/releases`, { headers: { authorization: alice } })).status).toBe(403)
    expect((await activate('r-1.4.2-100', alice)).status).toBe(403)
  })

  it('refuses traversal and malformed release ids with 400, unknown ids with 404', async () => {
    // fetch itself folds `..` and `%2e%2e` out of the path; the router then answers 404.
    for (const id of ['..', '%2e%2e']) {
      const res = await activate(id)
      expect([400, 404], id).toContain(res.status)
      expect((await json(res)).success).toBe(false)
    }
    for (const id of ['a%2Fb', '..%2F..%2Fetc', 'x'.repeat(65), 'a%00b', 'b%5Cc', 'a b']) {
      const res = await activate(id)
      expect(res.status, id).toBe(400)
      expect((await json(res)).error).toBe('bad_request')
    }
    // Sent as is (node:http does not normalise paths): the router drops dot-segments (404, as the
    // contract allows) and never reaches a release.
    for (const id of ['%2e%2e', '%2E', '..']) {
      const status = await new Promise<number>((resolve, reject) => {
        const req = request(`${base}/api/v1/admin/firmware/slave/releases/${id}/activate`, { method: 'POST', headers: { authorization: admin } }, (res) => {
          res.resume()
          resolve(res.statusCode ?? 0)
        })
        req.on('error', reject)
        req.end()
      })
      expect([400, 404], id).toContain(status)
    }
    expect((await activate('no-such-release')).status).toBe(404)
  })

  it('activates a release: devices get its manifest and bytes; the previous one goes back to published', async () => {
    const first = makeRelease(100)
    expect(await json(activate('r-1.4.2-100'))).toEqual({ success: true, release_id: 'r-1.4.2-100', activated: true })
    const manifest = await json(fetch(`${base}/api/v1/firmware/slave/manifest.json`))
    expect(manifest).toEqual(first.manifest)

    expect((await activate('r-1.4.2-101')).status).toBe(200)
    const list = await json(fetch(`${base}/api/v1/admin/firmware/slave/releases`, { headers: { authorization: admin } }))
    const states = Object.fromEntries(list.releases.map((r: { release_id: string; state: string }) => [r.release_id, r.state]))
    expect(states).toEqual({ 'r-1.4.2-100': 'published', 'r-1.4.2-101': 'active' })
  })

  it('serves the image whole, with ETag, HEAD, If-None-Match 304 and a resumable Range 206', async () => {
    const { image, manifest } = makeRelease(101)
    const whole = await fetch(`${base}/api/v1/firmware/slave/system.bin`)
    expect(whole.status).toBe(200)
    expect(whole.headers.get('content-type')).toBe('application/octet-stream')
    expect(whole.headers.get('etag')).toBe(`"${manifest.system.sha256}"`)
    expect(Number(whole.headers.get('content-length'))).toBe(image.length)
    expect(Buffer.from(await whole.arrayBuffer()).equals(image)).toBe(true)

    const head = await fetch(`${base}/api/v1/firmware/slave/system.bin`, { method: 'HEAD' })
    expect(head.status).toBe(200)
    expect(Number(head.headers.get('content-length'))).toBe(image.length)

    const cached = await fetch(`${base}/api/v1/firmware/slave/system.bin`, { headers: { 'if-none-match': `"${manifest.system.sha256}"` } })
    expect(cached.status).toBe(304)

    // A device that got the first 1000 bytes resumes from there.
    const part1 = await fetch(`${base}/api/v1/firmware/slave/system.bin`, { headers: { range: 'bytes=0-999' } })
    expect(part1.status).toBe(206)
    expect(part1.headers.get('content-range')).toBe(`bytes 0-999/${image.length}`)
    const part2 = await fetch(`${base}/api/v1/firmware/slave/system.bin`, { headers: { range: 'bytes=1000-' } })
    expect(part2.status).toBe(206)
    const joined = Buffer.concat([Buffer.from(await part1.arrayBuffer()), Buffer.from(await part2.arrayBuffer())])
    expect(joined.equals(image)).toBe(true)

    const beyond = await fetch(`${base}/api/v1/firmware/slave/system.bin`, { headers: { range: `bytes=${image.length}-` } })
    expect(beyond.status).toBe(416)
    expect(beyond.headers.get('content-range')).toBe(`bytes */${image.length}`)
  })

  it('writes an audit record for every upload and activation, accepted or not', async () => {
    const rows = await t.storage.db.selectFrom('audit_log').selectAll().orderBy('id').execute()
    const uploads = rows.filter((r) => r.action === 'firmware.upload')
    expect(uploads.filter((r) => r.outcome === 'accepted').map((r) => r.release_id)).toEqual(['r-1.4.2-100', 'r-1.4.2-101'])
    expect(uploads.filter((r) => r.outcome === 'rejected').length).toBeGreaterThanOrEqual(4)
    const rejected = uploads.find((r) => r.release_id === 'r-1.4.2-102')!
    expect(JSON.parse(rejected.detail).reasons.length).toBeGreaterThan(0)
    expect(rows.filter((r) => r.action === 'firmware.activate' && r.outcome === 'activated').map((r) => r.release_id)).toEqual([
      'r-1.4.2-100',
      'r-1.4.2-101',
    ])
    const counted = async () =>
      (await t.storage.db.selectFrom('firmware_releases').select('download_count').where('release_id', '=', 'r-1.4.2-101').executeTakeFirstOrThrow()).download_count
    await expect.poll(counted, { timeout: 10_000 }).toBe(2)
  })
})

describe('firmware uploads without a root key', () => {
  it('answer 503 not_configured', async () => {
    const t = await startTestApp(DIALECTS[0]!)
    try {
      const admin = await loginAs(t.app, 'admin', 'admin')
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/admin/firmware/slave/releases',
        headers: { authorization: admin, 'content-type': 'multipart/form-data; boundary=x' },
        payload: '--x--\r\n',
      })
      expect(res.statusCode).toBe(503)
      expect(res.json().error).toBe('not_configured')
    } finally {
      await t.close()
    }
  })
})
