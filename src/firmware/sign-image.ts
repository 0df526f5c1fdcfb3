import { createHash, sign, type KeyObject } from 'node:crypto'
import { buildManifest } from './build-manifest.js'
import { isP256Key, publicKeyDer } from './firmware-keys.js'
import { formatImageVersion, invalidVersionFields, releaseVersionPrefix, type ImageVersion } from './image-version.js'
import type { FirmwareManifest, ProductInfo } from './manifest-schema.js'
import {
  IMAGE_HEADER_SIZE,
  IMAGE_MAGIC,
  PROTECTED_TLV_INFO_MAGIC,
  TLV_HEADER_SIZE,
  UNPROTECTED_TLV_INFO_MAGIC,
} from './mcuboot-image.js'
import { TLV_TYPE } from './tlv-type.js'

/** MCUboot's IMAGE_F_RAM_LOAD, which imgtool sets whenever a load address is given. */
const IMAGE_F_RAM_LOAD = 0x20
/** The longest DER ECDSA P-256 signature; `imgtool --pad-sig` zero-pads to it. */
const P256_SIGNATURE_MAX = 72
const U16_MAX = 0xffff
const U32_MAX = 0xffff_ffff

export interface SignImageOptions {
  /** The raw firmware binary. */
  payload: Uint8Array
  version: ImageVersion
  product: ProductInfo
  /** The signing key's private half (P-256). */
  signingKey: KeyObject
  /** The root's signature over the signing key (see `certifySigningKey`). */
  signerCert: Buffer
  /** `ih_load_addr`; non-zero also sets the RAM_LOAD flag, as imgtool does. Default 0. */
  loadAddr?: number
  /** `ih_hdr_size`, ≥ 32; bytes after the 32-byte header are 0xFF like `imgtool --pad-header`. Default 32. */
  headerSize?: number
  /** Default `major.minor.revision-build_num` (a valid release id). */
  release?: string
  /** Default `major.minor.revision+build_num`. */
  displayVersion?: string
  /** Zero-pad ECDSA_SIG to 72 bytes, like `imgtool --pad-sig`. */
  padSignature?: boolean
}

export interface SignedImage {
  image: Buffer
  manifest: FirmwareManifest
}

interface TlvEntry {
  type: number
  value: Buffer
}

function encodeTlvArea(magic: number, tlvs: TlvEntry[]): Buffer {
  const total = TLV_HEADER_SIZE + tlvs.reduce((sum, tlv) => sum + TLV_HEADER_SIZE + tlv.value.length, 0)
  if (total > U16_MAX) throw new RangeError(`TLV area of ${total} bytes exceeds the 65535 bytes MCUboot allows`)
  const area = Buffer.alloc(total)
  area.writeUInt16LE(magic, 0)
  area.writeUInt16LE(total, 2)
  let offset = TLV_HEADER_SIZE
  for (const tlv of tlvs) {
    area.writeUInt16LE(tlv.type, offset)
    area.writeUInt16LE(tlv.value.length, offset + 2)
    tlv.value.copy(area, offset + TLV_HEADER_SIZE)
    offset += TLV_HEADER_SIZE + tlv.value.length
  }
  return area
}

function encodeHeader(options: SignImageOptions, headerSize: number, protectedTlvSize: number): Buffer {
  const loadAddr = options.loadAddr ?? 0
  const header = Buffer.alloc(headerSize, 0xff)
  header.writeUInt32LE(IMAGE_MAGIC, 0)
  header.writeUInt32LE(loadAddr, 4)
  header.writeUInt16LE(headerSize, 8)
  header.writeUInt16LE(protectedTlvSize, 10)
  header.writeUInt32LE(options.payload.length, 12)
  header.writeUInt32LE(loadAddr === 0 ? 0 : IMAGE_F_RAM_LOAD, 16)
  header.writeUInt8(options.version.major, 20)
  header.writeUInt8(options.version.minor, 21)
  header.writeUInt16LE(options.version.revision, 22)
  header.writeUInt32LE(options.version.build_num, 24)
  header.writeUInt32LE(0, 28)
  return header
}

function checkOptions(options: SignImageOptions, headerSize: number): void {
  const badVersion = invalidVersionFields(options.version)
  if (badVersion.length > 0) throw new RangeError(`version ${badVersion.join(', ')} out of range`)
  if (!Number.isInteger(headerSize) || headerSize < IMAGE_HEADER_SIZE || headerSize > U16_MAX) {
    throw new RangeError(`header size must be an integer from ${IMAGE_HEADER_SIZE} to ${U16_MAX}`)
  }
  const loadAddr = options.loadAddr ?? 0
  if (!Number.isInteger(loadAddr) || loadAddr < 0 || loadAddr > U32_MAX) throw new RangeError('load address must fit in 32 bits')
  if (options.payload.length > U32_MAX) throw new RangeError('payload exceeds 4 GiB')
  if (options.signingKey.type !== 'private' || !isP256Key(options.signingKey)) {
    throw new TypeError('the signing key must be an ECDSA P-256 private key')
  }
}

/** Exactly the five product fields in the manifest's order, so PRODUCT_INFO and manifest agree. */
const pickProduct = (p: ProductInfo): ProductInfo =>
  ({ magic: p.magic, hw_version: p.hw_version, fw_version: p.fw_version, git_sha: p.git_sha, timestamp: p.timestamp })

/**
 * Signs a raw binary into an MCUboot image with the layout of contract §6 — PRODUCT_INFO
 * and SIGNER_CERT protected; SHA256, PUBKEY and ECDSA_SIG unprotected — and builds its
 * manifest. Throws RangeError/TypeError on options MCUboot cannot encode.
 */
export function signImage(options: SignImageOptions): SignedImage {
  const headerSize = options.headerSize ?? IMAGE_HEADER_SIZE
  checkOptions(options, headerSize)
  const product = pickProduct(options.product)
  const protectedArea = encodeTlvArea(PROTECTED_TLV_INFO_MAGIC, [
    { type: TLV_TYPE.PRODUCT_INFO, value: Buffer.from(JSON.stringify(product)) },
    { type: TLV_TYPE.SIGNER_CERT, value: options.signerCert },
  ])
  const signed = Buffer.concat([encodeHeader(options, headerSize, protectedArea.length), options.payload, protectedArea])

  let signature = sign('sha256', signed, { key: options.signingKey, dsaEncoding: 'der' })
  if (options.padSignature) signature = Buffer.concat([signature, Buffer.alloc(P256_SIGNATURE_MAX - signature.length)])
  const unprotectedArea = encodeTlvArea(UNPROTECTED_TLV_INFO_MAGIC, [
    { type: TLV_TYPE.SHA256, value: createHash('sha256').update(signed).digest() },
    { type: TLV_TYPE.PUBKEY, value: publicKeyDer(options.signingKey) },
    { type: TLV_TYPE.ECDSA_SIG, value: signature },
  ])

  const image = Buffer.concat([signed, unprotectedArea])
  const { version } = options
  const manifest = buildManifest(image, {
    release: options.release ?? `${releaseVersionPrefix(version)}-${version.build_num}`,
    image_version: version.build_num,
    display_version: options.displayVersion ?? formatImageVersion(version),
    product,
  })
  return { image, manifest }
}
