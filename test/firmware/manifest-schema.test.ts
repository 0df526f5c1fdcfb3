import { describe, expect, it } from 'vitest'
import { checkManifestShape } from '../../src/firmware/manifest-schema.js'

const valid = {
  release: 'slave-1.2.3_45',
  image_version: 45,
  display_version: '1.2.3',
  system: { offset: 0, length: 1024, sha256: 'A'.repeat(64), crc32: '0xDEADBEEF' },
  product: { magic: 'PNP', hw_version: 1, fw_version: 2, git_sha: 'abc', timestamp: '2025-01-01T00:00:00.000Z' },
}

describe('checkManifestShape', () => {
  it('accepts the seed manifest, extra top-level fields included', () => {
    expect(checkManifestShape(valid)).toEqual([])
    expect(checkManifestShape({ ...valid, notes: 'first release' })).toEqual([])
  })

  it.each([
    [null, ['manifest must be a JSON object']],
    [[], ['manifest must be a JSON object']],
    [{ ...valid, system: 'x' }, ['manifest.system must be an object {offset, length, sha256, crc32}']],
    [{ ...valid, image_version: 1.5 }, ['manifest.image_version must be an integer from 0 to 4294967295 (the image header build_num)']],
    [{ ...valid, image_version: 2 ** 32 }, ['manifest.image_version must be an integer from 0 to 4294967295 (the image header build_num)']],
    [{ ...valid, system: { ...valid.system, crc32: 'deadbee' } }, ['manifest.system.crc32 must be 8 hex digits, 0x allowed (CRC-32 IEEE of the image file)']],
    [{ ...valid, product: { ...valid.product, timestamp: '2025-01-01 00:00' } }, ['manifest.product.timestamp must be an ISO 8601 UTC date-time such as 2024-05-01T12:00:00Z']],
    [{ ...valid, product: { ...valid.product, hw_version: '1' } }, ['manifest.product.hw_version must be a non-negative integer (hardware version)']],
    [{ ...valid, release: 'a/b' }, ['manifest.release "a/b" is not a valid release id (1–64 of A–Z a–z 0–9 . _ : -, not . or ..)']],
    [{ ...valid, release: 'x'.repeat(65) }, [expect.stringMatching(/^manifest.release "x+" is not a valid release id/)]],
  ])('rejects %j', (manifest, reasons) => {
    expect(checkManifestShape(manifest)).toEqual(reasons)
  })

  it('names every missing field', () => {
    expect(checkManifestShape({ product: {} })).toEqual([
      'manifest.release is missing',
      'manifest.image_version is missing',
      'manifest.display_version is missing',
      'manifest.system is missing',
      'manifest.product.magic is missing',
      'manifest.product.hw_version is missing',
      'manifest.product.fw_version is missing',
      'manifest.product.git_sha is missing',
      'manifest.product.timestamp is missing',
    ])
  })
})
