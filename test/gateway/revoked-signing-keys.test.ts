import { mkdtempSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/config.js'
import { certifySigningKey, generateFirmwareKeys, generateP256KeyPair, keyFingerprint, publicKeyDer, publicKeyPem } from '../../src/firmware/firmware-keys.js'
import { signImage } from '../../src/firmware/sign-image.js'
import { DIALECTS, testDatabase } from '../helpers/dialects.js'
import { loginAs, startTestApp, type TestApp } from '../helpers/test-app.js'

const keys = generateFirmwareKeys()
// A second signing key certified by the same root: the one that stays trusted.
const good = generateP256KeyPair()
const goodCert = certifySigningKey(keys.root.privateKey, good.publicKey)
const revokedFingerprint = keyFingerprint(publicKeyDer(keys.signing.publicKey))
const product = { magic: 'PNP-SLAVE', hw_version: 3, fw_version: 7, git_sha: 'abc1234', timestamp: '2026-11-01T12:00:00Z' }

const release = (build: number, byGoodKey: boolean) =>
  signImage({
    payload: Buffer.from(`revocation build ${build} `.repeat(100)),
    version: { major: 1, minor: 0, revision: 0, build_num: build },
    product,
    signingKey: byGoodKey ? good.privateKey : keys.signing.privateKey,
    signerCert: byGoodKey ? goodCert : keys.signerCert,
    release: `rk-${build}`,
  })
const [leaked1, good1, leaked2, good2] = [release(1, false), release(2, true), release(3, false), release(4, true)]

/** A signing key listed in FIRMWARE_REVOKED_KEYS (docs/firmware.md, "Revoking a signing key"). */
describe.each(DIALECTS)('revoked firmware signing keys on %s', (dialect) => {
  const database = testDatabase(dialect, path.join(mkdtempSync(path.join(tmpdir(), 'fg-revoked-')), 'fg.db'))
  const root = publicKeyPem(keys.root.publicKey)
  let t: TestApp | undefined
  afterAll(async () => {
    await t?.close()
    await database.cleanup()
  })

  const start = async (env: Record<string, string>) => {
    t = await startTestApp(dialect, { FIRMWARE_ROOT_PUBKEY: root, ...env }, { database })
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    const base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`
    const admin = await loginAs(t.app, 'admin', 'admin')
    const app = t.app
    return {
      upload: (r: ReturnType<typeof release>) => {
        const form = new FormData()
        form.append('image', new Blob([r.image]), 'system.bin')
        form.append('manifest', JSON.stringify(r.manifest))
        return fetch(`${base}/api/v1/admin/firmware/slave/releases`, { method: 'POST', body: form, headers: { authorization: admin } })
      },
      activate: (id: string) => app.inject({ method: 'POST', url: `/api/v1/admin/firmware/slave/releases/${id}/activate`, headers: { authorization: admin } }),
      get: (url: string) => app.inject({ url: `/api/v1/firmware/slave/${url}` }),
      /** The platform's update check for a machine running version 0.0.0 (any active release is newer). */
      updateCheck: async () => {
        await app.inject({ method: 'POST', url: '/api/admin/device/add', headers: { 'x-console-token': 'test-console-token' }, payload: { device_id: 'rk-machine', model: 'm' } })
        return (await app.inject({ url: '/v1/ota/check?device_id=rk-machine&version=0.0.0' })).json() as { update: boolean; release?: { release_id: string } }
      },
    }
  }

  it('refuses uploads signed by the revoked key and stops serving the releases it signed; other keys go on', async () => {
    // Before the revocation: both keys' releases are accepted, the leaked key's one is active.
    let s = await start({})
    for (const r of [leaked1, good1]) expect((await s.upload(r)).status).toBe(201)
    expect((await s.activate('rk-1')).statusCode).toBe(200)
    expect((await s.get('system.bin')).statusCode).toBe(200)
    expect(await s.updateCheck()).toMatchObject({ update: true, release: { release_id: 'rk-1' } })
    await t!.app.close()

    s = await start({ FIRMWARE_REVOKED_KEYS: `${revokedFingerprint.toUpperCase()}, ${'ab'.repeat(32)}` })
    const refused = await s.upload(leaked2)
    expect(refused.status).toBe(422)
    const body = (await refused.json()) as { success: boolean; error: string; reasons: string[] }
    expect(body).toMatchObject({ success: false, error: 'invalid_firmware' })
    expect(body.reasons.join('\n')).toContain(`signing key ${revokedFingerprint} is revoked`)
    expect((await s.upload(good2)).status).toBe(201)

    for (const url of ['manifest.json', 'system.bin', 'releases/rk-1/manifest.json', 'releases/rk-1/system.bin']) {
      const res = await s.get(url)
      expect(res.statusCode, url).toBe(404)
      expect(res.json()).toMatchObject({ success: false, error: 'not_found' })
    }
    expect((await s.get('releases/rk-2/system.bin')).statusCode).toBe(200)
    expect(await s.updateCheck()).toMatchObject({ update: false })
    const activation = await s.activate('rk-1')
    expect(activation.statusCode).toBe(422)
    expect(activation.json()).toMatchObject({ success: false, error: 'invalid_firmware' })
    expect((await s.activate('rk-2')).statusCode).toBe(200)
    expect((await s.get('manifest.json')).json()).toMatchObject({ release: 'rk-2' })
    expect(await s.updateCheck()).toMatchObject({ update: true, release: { release_id: 'rk-2' } })
  })

  it('refuses a malformed fingerprint at start, naming the variable', () => {
    expect(() => loadConfig({ FIRMWARE_REVOKED_KEYS: 'not-a-fingerprint' })).toThrow(/FIRMWARE_REVOKED_KEYS/)
  })
})
