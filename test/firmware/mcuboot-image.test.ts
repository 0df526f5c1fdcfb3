import { describe, expect, it } from 'vitest'
import { parseMcubootImage, type McubootParseResult } from '../../src/firmware/mcuboot-image.js'
import { buildHandImage, makeHandKeys } from './hand-built-image.js'

const keys = makeHandKeys()
const unknownTlv = { type: 0x7777, value: Buffer.from('abc') }
const { image } = buildHandImage({ keys, headerSize: 64, headerFill: 0xff, protectedTlvs: ['product', unknownTlv, 'cert'] })

const reasonOf = (result: McubootParseResult) => (result.ok ? 'parsed' : result.reason)
const patched = (write: (copy: Buffer) => void) => {
  const copy = Buffer.from(image)
  write(copy)
  return copy
}

describe('parseMcubootImage', () => {
  it('reads the header, both TLV areas with offsets, and the signed range', () => {
    const result = parseMcubootImage(image)
    if (!result.ok) throw new Error(result.reason)
    const { header, payload, protectedArea, unprotectedArea, protectedTlvs, unprotectedTlvs, signed } = result.image
    expect(header).toEqual({
      magic: 0x96f3b83d,
      loadAddr: 0,
      headerSize: 64,
      protectedTlvSize: protectedArea.end - protectedArea.start,
      imageSize: payload.end - payload.start,
      flags: 0,
      version: { major: 2, minor: 5, revision: 300, build_num: 1234 },
    })
    expect(payload.start).toBe(64)
    expect(protectedArea.start).toBe(payload.end)
    expect(unprotectedArea).toEqual({ start: protectedArea.end, end: image.length })
    expect(signed).toEqual({ start: 0, end: protectedArea.end })
    expect(protectedTlvs.map((tlv) => tlv.type)).toEqual([0x00a1, 0x7777, 0x00a0])
    expect(unprotectedTlvs.map((tlv) => tlv.type)).toEqual([0x0010, 0x0002, 0x0022])
    expect(protectedTlvs[0].offset).toBe(protectedArea.start + 4)
    expect(protectedTlvs[1].value.toString()).toBe('abc')
    expect(image.readUInt16LE(unprotectedTlvs[2].offset)).toBe(0x0022)
  })

  it('accepts a plain Uint8Array view into a larger buffer', () => {
    const framed = new Uint8Array(image.length + 20)
    framed.set(image, 10)
    expect(parseMcubootImage(framed.subarray(10, 10 + image.length)).ok).toBe(true)
  })

  it.each([
    ['no bytes', Buffer.alloc(0), 'image is 0 bytes, shorter than the 32-byte MCUboot header'],
    ['31 bytes', image.subarray(0, 31), 'image is 31 bytes, shorter than the 32-byte MCUboot header'],
    ['a bad magic', patched((b) => b.writeUInt32LE(0x12345678, 0)), 'header magic is 0x12345678, expected 0x96f3b83d'],
    ['ih_hdr_size below 32', patched((b) => b.writeUInt16LE(16, 8)), 'ih_hdr_size is 16, less than 32'],
    [
      'a payload beyond the file',
      patched((b) => b.writeUInt32LE(0xffffffff, 12)),
      `ih_hdr_size 64 + ih_img_size 4294967295 exceed the file size (${image.length} bytes)`,
    ],
    ['a protected size that disagrees with its area', patched((b) => b.writeUInt16LE(b.readUInt16LE(10) + 1, 10)), /protected TLV area total is \d+, but ih_protect_tlv_size is \d+/],
    ['a protected size under 4', patched((b) => b.writeUInt16LE(2, 10)), /protected TLV area total is \d+, but ih_protect_tlv_size is 2/],
    ['no protected size while a protected area is there', patched((b) => b.writeUInt16LE(0, 10)), /unprotected TLV info magic is 0x6908 at offset \d+, expected 0x6907/],
    ['the whole file cut after the payload', image.subarray(0, 64 + image.readUInt32LE(12)), /protected TLV info at offset \d+ is past the end of the file/],
  ])('rejects %s', (_, bytes, reason) => {
    const result = reasonOf(parseMcubootImage(bytes))
    if (typeof reason === 'string') expect(result).toBe(reason)
    else expect(result).toMatch(reason)
  })

  it('rejects a TLV whose length runs past its area', () => {
    const result = parseMcubootImage(image)
    if (!result.ok) throw new Error(result.reason)
    const last = result.image.unprotectedTlvs[2]
    const bytes = patched((b) => b.writeUInt16LE(0xffff, last.offset + 2))
    expect(reasonOf(parseMcubootImage(bytes))).toBe(`unprotected TLV 0x0022 at offset ${last.offset} declares 65535 bytes, past the end of its area`)
  })

  it('rejects an area whose total ends inside a TLV header', () => {
    // An unprotected area of 6 bytes: its info, then half a TLV header.
    const bytes = Buffer.concat([image.subarray(0, unprotectedStart()), Buffer.from([0x07, 0x69, 6, 0, 0x10, 0x00])])
    expect(reasonOf(parseMcubootImage(bytes))).toBe(`unprotected TLV area ends inside a TLV header at offset ${unprotectedStart() + 4}`)
  })

  it('rejects an unprotected area total under 4 and bytes after the area', () => {
    const head = image.subarray(0, unprotectedStart())
    expect(reasonOf(parseMcubootImage(Buffer.concat([head, Buffer.from([0x07, 0x69, 2, 0])])))).toBe(
      'unprotected TLV area total is 2, less than its own 4-byte info',
    )
    expect(reasonOf(parseMcubootImage(Buffer.concat([head, Buffer.from([0x07, 0x69, 4, 0, 0])])))).toBe(
      '1 bytes follow the unprotected TLV area; the file must end there',
    )
    expect(parseMcubootImage(Buffer.concat([head, Buffer.from([0x07, 0x69, 4, 0])])).ok).toBe(true)
  })
})

/** Where the unprotected TLV area of the 64-byte-header test image starts. */
function unprotectedStart(): number {
  return 64 + image.readUInt32LE(12) + image.readUInt16LE(10)
}
