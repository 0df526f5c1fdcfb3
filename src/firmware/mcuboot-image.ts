import type { ImageVersion } from './image-version.js'

export const IMAGE_MAGIC = 0x96f3b83d
export const IMAGE_HEADER_SIZE = 32
export const PROTECTED_TLV_INFO_MAGIC = 0x6908
export const UNPROTECTED_TLV_INFO_MAGIC = 0x6907
/** Both the TLV info `{magic u16, total u16}` and a TLV header `{type u16, len u16}` are 4 bytes. */
export const TLV_HEADER_SIZE = 4

/** The 32-byte MCUboot image header, little-endian. */
export interface McubootHeader {
  magic: number
  loadAddr: number
  headerSize: number
  protectedTlvSize: number
  imageSize: number
  flags: number
  version: ImageVersion
}

export interface Tlv {
  type: number
  /** File offset of the TLV's `{type, len}` header; the value starts 4 bytes later. */
  offset: number
  /** A view into the parsed bytes, not a copy. */
  value: Buffer
}

export interface ByteRange {
  start: number
  end: number
}

export interface McubootImage {
  header: McubootHeader
  payload: ByteRange
  /** Empty range when `ih_protect_tlv_size` is 0. Includes the 4-byte TLV info. */
  protectedArea: ByteRange
  unprotectedArea: ByteRange
  protectedTlvs: Tlv[]
  unprotectedTlvs: Tlv[]
  /** Header + payload + protected TLV area: what the SHA256 TLV and ECDSA_SIG cover. */
  signed: ByteRange
}

export type McubootParseResult = { ok: true; image: McubootImage } | { ok: false; reason: string }

const hex = (value: number, digits: number) => `0x${value.toString(16).padStart(digits, '0')}`

function readHeader(bytes: Buffer): McubootHeader {
  return {
    magic: bytes.readUInt32LE(0),
    loadAddr: bytes.readUInt32LE(4),
    headerSize: bytes.readUInt16LE(8),
    protectedTlvSize: bytes.readUInt16LE(10),
    imageSize: bytes.readUInt32LE(12),
    flags: bytes.readUInt32LE(16),
    version: {
      major: bytes.readUInt8(20),
      minor: bytes.readUInt8(21),
      revision: bytes.readUInt16LE(22),
      build_num: bytes.readUInt32LE(24),
    },
  }
}

/**
 * Reads one TLV area starting at `start`: its info must carry `magic`, and its `total`
 * (info included) must be exactly covered by whole TLVs. `expectedTotal` pins the total
 * (the protected area's total must equal `ih_protect_tlv_size`).
 */
function readTlvArea(
  bytes: Buffer,
  start: number,
  magic: number,
  label: string,
  expectedTotal?: number,
): { ok: true; tlvs: Tlv[]; end: number } | { ok: false; reason: string } {
  if (start + TLV_HEADER_SIZE > bytes.length) {
    return { ok: false, reason: `${label} TLV info at offset ${start} is past the end of the file (${bytes.length} bytes)` }
  }
  const foundMagic = bytes.readUInt16LE(start)
  if (foundMagic !== magic) {
    return { ok: false, reason: `${label} TLV info magic is ${hex(foundMagic, 4)} at offset ${start}, expected ${hex(magic, 4)}` }
  }
  const total = bytes.readUInt16LE(start + 2)
  if (expectedTotal !== undefined && total !== expectedTotal) {
    return { ok: false, reason: `${label} TLV area total is ${total}, but ih_protect_tlv_size is ${expectedTotal}` }
  }
  if (total < TLV_HEADER_SIZE) {
    return { ok: false, reason: `${label} TLV area total is ${total}, less than its own 4-byte info` }
  }
  const end = start + total
  if (end > bytes.length) {
    return { ok: false, reason: `${label} TLV area (${total} bytes at offset ${start}) runs past the end of the file (${bytes.length} bytes)` }
  }
  const tlvs: Tlv[] = []
  let offset = start + TLV_HEADER_SIZE
  while (offset < end) {
    if (offset + TLV_HEADER_SIZE > end) {
      return { ok: false, reason: `${label} TLV area ends inside a TLV header at offset ${offset}` }
    }
    const type = bytes.readUInt16LE(offset)
    const length = bytes.readUInt16LE(offset + 2)
    const valueEnd = offset + TLV_HEADER_SIZE + length
    if (valueEnd > end) {
      return { ok: false, reason: `${label} TLV ${hex(type, 4)} at offset ${offset} declares ${length} bytes, past the end of its area` }
    }
    tlvs.push({ type, offset, value: bytes.subarray(offset + TLV_HEADER_SIZE, valueEnd) })
    offset = valueEnd
  }
  return { ok: true, tlvs, end }
}

/**
 * Parses an MCUboot image (contract §6). Never throws and never reads out of bounds:
 * any size, offset or count that does not add up gives `{ok: false, reason}`.
 */
export function parseMcubootImage(input: Uint8Array): McubootParseResult {
  const bytes = Buffer.from(input.buffer, input.byteOffset, input.byteLength)
  if (bytes.length < IMAGE_HEADER_SIZE) {
    return { ok: false, reason: `image is ${bytes.length} bytes, shorter than the ${IMAGE_HEADER_SIZE}-byte MCUboot header` }
  }
  const header = readHeader(bytes)
  if (header.magic !== IMAGE_MAGIC) {
    return { ok: false, reason: `header magic is ${hex(header.magic, 8)}, expected ${hex(IMAGE_MAGIC, 8)}` }
  }
  if (header.headerSize < IMAGE_HEADER_SIZE) {
    return { ok: false, reason: `ih_hdr_size is ${header.headerSize}, less than ${IMAGE_HEADER_SIZE}` }
  }
  const payloadEnd = header.headerSize + header.imageSize
  if (payloadEnd > bytes.length) {
    return {
      ok: false,
      reason: `ih_hdr_size ${header.headerSize} + ih_img_size ${header.imageSize} exceed the file size (${bytes.length} bytes)`,
    }
  }

  let protectedTlvs: Tlv[] = []
  let protectedEnd = payloadEnd
  if (header.protectedTlvSize > 0) {
    const area = readTlvArea(bytes, payloadEnd, PROTECTED_TLV_INFO_MAGIC, 'protected', header.protectedTlvSize)
    if (!area.ok) return area
    protectedTlvs = area.tlvs
    protectedEnd = area.end
  }

  const unprotected = readTlvArea(bytes, protectedEnd, UNPROTECTED_TLV_INFO_MAGIC, 'unprotected')
  if (!unprotected.ok) return unprotected
  if (unprotected.end !== bytes.length) {
    return { ok: false, reason: `${bytes.length - unprotected.end} bytes follow the unprotected TLV area; the file must end there` }
  }

  return {
    ok: true,
    image: {
      header,
      payload: { start: header.headerSize, end: payloadEnd },
      protectedArea: { start: payloadEnd, end: protectedEnd },
      unprotectedArea: { start: protectedEnd, end: unprotected.end },
      protectedTlvs,
      unprotectedTlvs: unprotected.tlvs,
      signed: { start: 0, end: protectedEnd },
    },
  }
}
