import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { readPublicKeyPem } from '../../src/firmware/firmware-keys.js'
import { parseMcubootImage } from '../../src/firmware/mcuboot-image.js'
import { verifyRelease } from '../../src/firmware/verify-release.js'

// Signed by MCUboot's own imgtool; see fixtures/README.md for the exact command.
const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url))
const image = fixture('imgtool-system.bin')
const manifest = JSON.parse(fixture('imgtool-manifest.json').toString('utf8')) as Record<string, unknown>
const testOnlyRoot = readPublicKeyPem(fixture('test-only-root.pub.pem'))

describe('an image signed by MCUboot imgtool', () => {
  it('passes every check, with custom TLVs in the protected area and a 0xFF-padded 0x200 header', () => {
    const result = verifyRelease(image, manifest, testOnlyRoot)
    expect(result.reasons).toEqual([])
    expect(result.ok).toBe(true)
    expect(result.info?.header).toMatchObject({ headerSize: 0x200, version: { major: 1, minor: 2, revision: 3, build_num: 45 } })
    expect(image.subarray(32, 0x200).every((byte) => byte === 0xff)).toBe(true)

    const parsed = parseMcubootImage(image)
    if (!parsed.ok) throw new Error(parsed.reason)
    expect(parsed.image.protectedTlvs.map((tlv) => tlv.type)).toEqual([0x00a0, 0x00a1])
    const signature = parsed.image.unprotectedTlvs.find((tlv) => tlv.type === 0x0022)!.value
    expect(signature.length).toBe(72)
    expect(signature[1] + 2).toBeLessThan(72)
  })

  it('is rejected when its manifest claims another product', () => {
    const result = verifyRelease(image, { ...manifest, product: { ...(manifest.product as object), fw_version: 8 } }, testOnlyRoot)
    expect(result.reasons).toEqual(['manifest product differs from the image\'s PRODUCT_INFO (0x00a1) TLV: fw_version (manifest 8, image 7)'])
  })
})
