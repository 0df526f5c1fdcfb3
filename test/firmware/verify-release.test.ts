import { generateKeyPairSync } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { generateFirmwareKeys } from '../../src/firmware/firmware-keys.js'
import { signImage } from '../../src/firmware/sign-image.js'
import { verifyRelease, type ReleaseVerification } from '../../src/firmware/verify-release.js'
import { buildHandImage, HAND_PRODUCT, makeHandKeys, withSystemOf } from './hand-built-image.js'

const failedChecks = (result: ReleaseVerification) => result.checks.filter((check) => check.status === 'fail').map((check) => check.name)

const keys = generateFirmwareKeys()
const hand = makeHandKeys()
const product = { magic: 'PNPSLAVE', hw_version: 3, fw_version: 9, git_sha: '0123abc', timestamp: '2025-06-01T00:00:00Z' }
const signed = signImage({
  payload: Buffer.from('firmware payload '.repeat(64)),
  version: { major: 1, minor: 2, revision: 3, build_num: 45 },
  product,
  signingKey: keys.signing.privateKey,
  signerCert: keys.signerCert,
})

describe('verifyRelease: images that pass', () => {
  it('accepts an image made by signImage and reports what it read', () => {
    const result = verifyRelease(signed.image, signed.manifest, keys.root.publicKey)
    expect(result.reasons).toEqual([])
    expect(result.ok).toBe(true)
    expect(result.checks.every((check) => check.status === 'ok')).toBe(true)
    expect(result.info).toMatchObject({
      size: signed.image.length,
      sha256: signed.manifest.system.sha256,
      crc32: signed.manifest.system.crc32,
      header: { headerSize: 32, version: { major: 1, minor: 2, revision: 3, build_num: 45 } },
      product,
    })
  })

  it('accepts an image hand-assembled by an independent builder', () => {
    const { image, manifest } = buildHandImage({ keys: hand })
    const result = verifyRelease(image, manifest, hand.rootPublic)
    expect(result.reasons).toEqual([])
    expect(result.ok).toBe(true)
    expect(result.info?.product).toEqual(HAND_PRODUCT)
  })

  it('accepts SIGNER_CERT in the unprotected area', () => {
    const { image, manifest } = buildHandImage({ keys: hand, protectedTlvs: ['product'], unprotectedTlvs: ['sha256', 'pubkey', 'cert', 'sig'] })
    expect(verifyRelease(image, manifest, hand.rootPublic).reasons).toEqual([])
  })

  it('accepts a 0x200-byte header padded with 0xFF like imgtool --pad-header', () => {
    const { image, manifest } = buildHandImage({ keys: hand, headerSize: 0x200, headerFill: 0xff })
    const result = verifyRelease(image, manifest, hand.rootPublic)
    expect(result.reasons).toEqual([])
    expect(result.info?.header.headerSize).toBe(0x200)
  })

  it('accepts signatures zero-padded to 72 bytes like imgtool --pad-sig', () => {
    const { image, manifest } = buildHandImage({ keys: hand, padSignatures: true })
    expect(verifyRelease(image, manifest, hand.rootPublic).reasons).toEqual([])
    // A DER signature may already be 72 bytes long; these always carry zero padding.
    const paddedCert = { type: 0x00a0, value: Buffer.concat([hand.signerCert, Buffer.alloc(4)]) }
    const alwaysPadded = buildHandImage({ keys: hand, protectedTlvs: ['product', paddedCert], signatureSuffix: Buffer.alloc(2) })
    expect(verifyRelease(alwaysPadded.image, alwaysPadded.manifest, hand.rootPublic).reasons).toEqual([])
    const padded = signImage({ ...signOptions(), padSignature: true })
    expect(verifyRelease(padded.image, padded.manifest, keys.root.publicKey).reasons).toEqual([])
  })

  it('finds TLVs by type whatever their order', () => {
    const { image, manifest } = buildHandImage({ keys: hand, protectedTlvs: ['cert', 'product'], unprotectedTlvs: ['sig', 'pubkey', 'sha256'] })
    expect(verifyRelease(image, manifest, hand.rootPublic).reasons).toEqual([])
  })

  it('ignores TLVs of other types in both areas', () => {
    const unknown = (type: number) => ({ type, value: Buffer.from(`vendor data ${type}`) })
    const { image, manifest } = buildHandImage({
      keys: hand,
      protectedTlvs: [unknown(0x50), 'product', unknown(0x1234), 'cert'],
      unprotectedTlvs: [unknown(0x01), 'sha256', unknown(0xffff), 'pubkey', 'sig', { type: 0x99, value: Buffer.alloc(0) }],
    })
    expect(verifyRelease(image, manifest, hand.rootPublic).reasons).toEqual([])
  })

  it('accepts an upper-case sha256 and a 0x-prefixed upper-case crc32', () => {
    const manifest = {
      ...signed.manifest,
      system: { ...signed.manifest.system, sha256: signed.manifest.system.sha256.toUpperCase(), crc32: `0x${signed.manifest.system.crc32.toUpperCase()}` },
    }
    expect(verifyRelease(signed.image, manifest, keys.root.publicKey).ok).toBe(true)
  })
})

function signOptions() {
  return {
    payload: Buffer.from('another payload'),
    version: { major: 4, minor: 0, revision: 1, build_num: 7 },
    product,
    signingKey: keys.signing.privateKey,
    signerCert: keys.signerCert,
  }
}

describe('verifyRelease: each tampering is rejected with its own reason', () => {
  const good = buildHandImage({ keys: hand })
  const verifyHand = (image: Buffer, manifest: unknown) => verifyRelease(image, manifest, hand.rootPublic)

  it('rejects a manifest sha256 that is not the file hash', () => {
    const manifest = { ...good.manifest, system: { ...(good.manifest.system as object), sha256: 'ab'.repeat(32) } }
    const result = verifyHand(good.image, manifest)
    expect(failedChecks(result)).toEqual(['sha256'])
    expect(result.reasons[0]).toMatch(/system\.sha256 .* does not match the file's SHA-256/)
  })

  it('rejects a manifest crc32 that is not the file CRC', () => {
    const manifest = { ...good.manifest, system: { ...(good.manifest.system as object), crc32: '0x00000000' } }
    const result = verifyHand(good.image, manifest)
    expect(failedChecks(result)).toEqual(['crc32'])
    expect(result.reasons[0]).toMatch(/system\.crc32 0x00000000 does not match the file's CRC-32/)
  })

  it('rejects a flipped payload byte even with a manifest made for the changed file', () => {
    const image = Buffer.from(good.image)
    image[40] ^= 0x01
    const result = verifyHand(image, withSystemOf(good.manifest, image))
    expect(failedChecks(result)).toEqual(['image_hash', 'signature'])
    expect(result.reasons).toEqual([
      'SHA256 (0x0010) TLV does not match the SHA-256 of header + payload + protected TLV area',
      'ECDSA_SIG (0x0022) does not verify with PUBKEY over header + payload + protected TLV area',
    ])
  })

  it('rejects a signing key that another root certified', () => {
    const result = verifyHand(good.image, good.manifest)
    expect(result.ok).toBe(true)
    const otherRoot = makeHandKeys().rootPublic
    const rejected = verifyRelease(good.image, good.manifest, otherRoot)
    expect(failedChecks(rejected)).toEqual(['signer_cert'])
    expect(rejected.reasons[0]).toMatch(/not certified by FIRMWARE_ROOT_PUBKEY/)
  })

  it('rejects an image whose signing key is not the certified one', () => {
    const impostor = makeHandKeys()
    const { image, manifest } = buildHandImage({ keys: { ...impostor, signerCert: hand.signerCert } })
    expect(failedChecks(verifyHand(image, manifest))).toEqual(['signer_cert'])
  })

  it('rejects a bad header magic', () => {
    const image = Buffer.from(good.image)
    image.writeUInt32LE(0x96f3b83e, 0)
    const result = verifyHand(image, withSystemOf(good.manifest, image))
    expect(failedChecks(result)).toEqual(['layout'])
    expect(result.reasons).toEqual(['header magic is 0x96f3b83e, expected 0x96f3b83d'])
    expect(result.checks.filter((check) => check.status === 'skipped')).toHaveLength(7)
  })

  it('rejects a truncated TLV area', () => {
    const image = good.image.subarray(0, good.image.length - 10)
    const result = verifyHand(image, withSystemOf(good.manifest, image))
    expect(failedChecks(result)).toEqual(['layout'])
    expect(result.reasons[0]).toMatch(/unprotected TLV area \(\d+ bytes at offset \d+\) runs past the end of the file/)
  })

  it('rejects a system.length that is not the file size', () => {
    const manifest = { ...good.manifest, system: { ...(good.manifest.system as object), length: good.image.length + 1 } }
    const result = verifyHand(good.image, manifest)
    expect(failedChecks(result)).toEqual(['length'])
    expect(result.reasons).toEqual([`system.length is ${good.image.length + 1}, but the file is ${good.image.length} bytes`])
  })

  it('rejects a manifest product that differs from PRODUCT_INFO', () => {
    const manifest = { ...good.manifest, product: { ...HAND_PRODUCT, hw_version: 3 } }
    const result = verifyHand(good.image, manifest)
    expect(failedChecks(result)).toEqual(['product_info'])
    expect(result.reasons[0]).toContain('hw_version (manifest 3, image 2)')
  })

  it('rejects a PRODUCT_INFO with an extra field the manifest lacks', () => {
    const { image, manifest } = buildHandImage({ keys: hand, product: { ...HAND_PRODUCT, board: 'rev-b' } })
    const result = verifyHand(image, { ...manifest, product: HAND_PRODUCT })
    expect(failedChecks(result)).toEqual(['product_info'])
    expect(result.reasons[0]).toContain('board (manifest absent, image "rev-b")')
  })

  it('rejects an image_version that is not the header build_num', () => {
    const result = verifyHand(good.image, { ...good.manifest, image_version: 1235 })
    expect(failedChecks(result)).toEqual(['image_version'])
    expect(result.reasons).toEqual(['image_version is 1235, but the image header build_num is 1234'])
  })

  it('rejects a display_version that does not start with major.minor.revision', () => {
    for (const display of ['2.5.301', '2.5', 'v2.5.300', '2.5.3000']) {
      const result = verifyHand(good.image, { ...good.manifest, display_version: display })
      expect(failedChecks(result), display).toEqual(['display_version'])
      expect(result.reasons[0]).toContain('does not start with the image version 2.5.300')
    }
    for (const display of ['2.5.300', '2.5.300+1234', '2.5.300-rc1', '2.5.300 (build 1234)']) {
      expect(verifyHand(good.image, { ...good.manifest, display_version: display }).ok, display).toBe(true)
    }
  })

  it('rejects signatures padded with anything but zero bytes', () => {
    const { image, manifest } = buildHandImage({ keys: hand, signatureSuffix: Buffer.from([0, 0, 1]) })
    const result = verifyHand(image, manifest)
    expect(failedChecks(result)).toEqual(['signature'])
    expect(result.reasons[0]).toMatch(/ECDSA_SIG \(0x0022\) TLV is not a DER signature/)
  })

  it('rejects bytes after the unprotected TLV area', () => {
    const image = Buffer.concat([good.image, Buffer.from([0xff, 0xff])])
    const result = verifyHand(image, withSystemOf(good.manifest, image))
    expect(result.reasons).toEqual(['2 bytes follow the unprotected TLV area; the file must end there'])
  })

  it('rejects an image that carries only a key hash (imgtool default), not the PUBKEY', () => {
    const keyHash = { type: 0x0001, value: Buffer.alloc(32, 7) }
    const { image, manifest } = buildHandImage({ keys: hand, unprotectedTlvs: ['sha256', keyHash, 'sig'] })
    const result = verifyHand(image, manifest)
    expect(failedChecks(result)).toEqual(['signing_key'])
    expect(result.reasons).toEqual(['PUBKEY (0x0002) TLV is missing from the unprotected TLV area'])
    expect(result.checks.find((check) => check.name === 'signature')?.status).toBe('skipped')
  })

  it('rejects a PUBKEY that is not a P-256 key', () => {
    const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' }).publicKey.export({ format: 'der', type: 'spki' })
    const { image, manifest } = buildHandImage({ keys: hand, unprotectedTlvs: ['sha256', { type: 0x0002, value: p384 }, 'sig'] })
    const result = verifyHand(image, manifest)
    expect(failedChecks(result)).toEqual(['signing_key', 'signer_cert'])
    expect(result.reasons[0]).toBe('PUBKEY (0x0002) TLV is not an ECDSA P-256 key (found ec secp384r1)')
    const garbage = buildHandImage({ keys: hand, unprotectedTlvs: ['sha256', { type: 0x0002, value: Buffer.from('nope') }, 'sig'] })
    expect(verifyHand(garbage.image, garbage.manifest).reasons[0]).toBe('PUBKEY (0x0002) TLV is not a DER SubjectPublicKeyInfo public key')
  })

  it('rejects PRODUCT_INFO outside the protected area, where it would not be signed', () => {
    const { image, manifest } = buildHandImage({ keys: hand, protectedTlvs: ['cert'], unprotectedTlvs: ['sha256', 'pubkey', 'sig', 'product'] })
    const result = verifyHand(image, manifest)
    expect(failedChecks(result)).toEqual(['product_info'])
    expect(result.reasons[0]).toBe('PRODUCT_INFO (0x00a1) TLV is in the unprotected TLV area; it must be in the protected one')
  })

  it('rejects a TLV it reads appearing twice', () => {
    const { image, manifest } = buildHandImage({ keys: hand, unprotectedTlvs: ['sha256', 'pubkey', 'sig', 'sig'] })
    const result = verifyHand(image, manifest)
    expect(failedChecks(result)).toEqual(['signature'])
    expect(result.reasons).toEqual(['image has 2 ECDSA_SIG (0x0022) TLVs; exactly one is allowed'])
    const twoCerts = buildHandImage({ keys: hand, unprotectedTlvs: ['sha256', 'pubkey', 'cert', 'sig'] })
    expect(failedChecks(verifyHand(twoCerts.image, twoCerts.manifest))).toEqual(['signer_cert'])
  })

  it('rejects a PRODUCT_INFO that is not JSON', () => {
    const { image, manifest } = buildHandImage({ keys: hand, protectedTlvs: [{ type: 0x00a1, value: Buffer.from([0xc3, 0x28]) }, 'cert'] })
    expect(verifyHand(image, manifest).reasons).toEqual(['PRODUCT_INFO (0x00a1) TLV is not UTF-8 text'])
  })

  it('rejects everything when the configured root key is not P-256', () => {
    const ed25519 = generateKeyPairSync('ed25519').publicKey
    const result = verifyRelease(good.image, good.manifest, ed25519)
    expect(result.reasons).toEqual(['the root key (FIRMWARE_ROOT_PUBKEY) is not an ECDSA P-256 key'])
  })

  it('reports a malformed manifest field by field, with the release id rule', () => {
    const manifest = { ...good.manifest, release: '..', image_version: '1234', system: { offset: 0, length: -1, sha256: 'xyz', crc32: 12 } }
    delete (manifest as Record<string, unknown>).display_version
    const result = verifyHand(good.image, manifest)
    expect(result.checks.find((check) => check.name === 'manifest')?.reasons).toEqual([
      'manifest.display_version is missing',
      'manifest.image_version must be an integer from 0 to 4294967295 (the image header build_num)',
      'manifest.system.length must be a non-negative integer (image size in bytes)',
      'manifest.system.sha256 must be 64 hex digits (SHA-256 of the image file)',
      'manifest.system.crc32 must be 8 hex digits, 0x allowed (CRC-32 IEEE of the image file)',
      'manifest.release ".." is not a valid release id (1–64 of A–Z a–z 0–9 . _ : -, not . or ..)',
    ])
    expect(failedChecks(result)).toEqual(['manifest'])
    expect(verifyHand(good.image, 'not an object').reasons).toEqual(['manifest must be a JSON object'])
  })
})

describe('verifyRelease: many failures at once', () => {
  it('reports every failing check, not just the first', () => {
    const good = buildHandImage({ keys: hand })
    const image = Buffer.from(good.image)
    image[33] ^= 0xff
    const manifest = {
      ...good.manifest,
      release: 'bad/id',
      display_version: '9.9.9',
      image_version: 1,
      product: { ...HAND_PRODUCT, git_sha: 'cafe' },
    }
    const result = verifyRelease(image, manifest, makeHandKeys().rootPublic)
    expect(failedChecks(result)).toEqual([
      'manifest',
      'sha256',
      'crc32',
      'image_hash',
      'signer_cert',
      'signature',
      'image_version',
      'display_version',
      'product_info',
    ])
    expect(result.reasons).toHaveLength(9)
    expect(result.ok).toBe(false)
  })
})
