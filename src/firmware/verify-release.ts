import { createHash, type KeyObject } from 'node:crypto'
import { isDeepStrictEqual } from 'node:util'
import { Value } from '@sinclair/typebox/value'
import { crc32Hex, isPlainObject } from '@fleetgate/device-agent/lib'
import { findTlv } from './find-tlv.js'
import { releaseVersionPrefix } from './image-version.js'
import { checkManifestShape, ProductInfoSchema, type ProductInfo } from './manifest-schema.js'
import { parseMcubootImage, type McubootHeader, type McubootImage } from './mcuboot-image.js'
import { ReleaseChecks, type ReleaseCheck } from './release-checks.js'
import { describeTlv } from './tlv-type.js'
import { verifySignatureChain } from './verify-signature-chain.js'

/** What the image says about itself; present whenever its MCUboot layout parses. */
export interface ReleaseInfo {
  size: number
  /** Lowercase hex of the whole file. */
  sha256: string
  /** 8 lowercase hex digits of the whole file. */
  crc32: string
  header: McubootHeader
  /** The PRODUCT_INFO TLV, when it is well-formed. */
  product?: ProductInfo
}

export interface ReleaseVerification {
  ok: boolean
  /** Every failing reason, in check order; empty when `ok`. */
  reasons: string[]
  /** Each check with its outcome, for reports such as `fleetgate firmware verify`. */
  checks: ReleaseCheck[]
  info?: ReleaseInfo
}

const NEEDS_IMAGE = 'needs a well-formed MCUboot image'
// Same rule as the schema's Type.Integer({minimum: 0}), so a skipped check always has a shape reason.
const isCount = (value: unknown): value is number => Number.isInteger(value) && (value as number) >= 0
const field = (value: unknown, ...path: string[]): unknown =>
  path.reduce<unknown>((node, key) => (isPlainObject(node) && Object.hasOwn(node, key) ? node[key] : undefined), value)
const show = (value: unknown) => (value === undefined ? 'absent' : JSON.stringify(value).slice(0, 80))

function checkFileDigests(checks: ReleaseChecks, manifest: unknown, size: number, sha256: string, crc32: string): void {
  const length = field(manifest, 'system', 'length')
  if (!isCount(length)) checks.skip('length', 'manifest system.length is not a usable integer')
  else checks.record('length', length === size ? [] : [`system.length is ${length}, but the file is ${size} bytes`])

  const claimedSha = field(manifest, 'system', 'sha256')
  if (typeof claimedSha !== 'string' || !/^[0-9a-f]{64}$/i.test(claimedSha)) checks.skip('sha256', 'manifest system.sha256 is not 64 hex digits')
  else checks.record('sha256', claimedSha.toLowerCase() === sha256 ? [] : [`system.sha256 ${claimedSha} does not match the file's SHA-256 ${sha256}`])

  const claimedCrc = field(manifest, 'system', 'crc32')
  if (typeof claimedCrc !== 'string' || !/^(0x)?[0-9a-f]{8}$/i.test(claimedCrc)) checks.skip('crc32', 'manifest system.crc32 is not 8 hex digits')
  else checks.record('crc32', claimedCrc.toLowerCase().replace(/^0x/, '') === crc32 ? [] : [`system.crc32 ${claimedCrc} does not match the file's CRC-32 ${crc32}`])
}

function checkVersions(checks: ReleaseChecks, manifest: unknown, header: McubootHeader): void {
  const imageVersion = field(manifest, 'image_version')
  const build = header.version.build_num
  if (!isCount(imageVersion)) checks.skip('image_version', 'manifest image_version is not a usable integer')
  else checks.record('image_version', imageVersion === build ? [] : [`image_version is ${imageVersion}, but the image header build_num is ${build}`])

  const display = field(manifest, 'display_version')
  const prefix = releaseVersionPrefix(header.version)
  // "1.2.30" must not pass for 1.2.3: the prefix has to end at a non-digit.
  const matches = typeof display === 'string' && display.startsWith(prefix) && !/^\d/.test(display.slice(prefix.length))
  if (typeof display !== 'string') checks.skip('display_version', 'manifest display_version is not a string')
  else checks.record('display_version', matches ? [] : [`display_version ${show(display)} does not start with the image version ${prefix}`])
}

function readProductInfo(value: Buffer): { product?: Record<string, unknown>; reason?: string } {
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(value)
  } catch {
    return { reason: `${describeTlv('PRODUCT_INFO')} TLV is not UTF-8 text` }
  }
  try {
    const product: unknown = JSON.parse(text)
    return isPlainObject(product) ? { product } : { reason: `${describeTlv('PRODUCT_INFO')} TLV is not a JSON object` }
  } catch {
    return { reason: `${describeTlv('PRODUCT_INFO')} TLV is not valid JSON` }
  }
}

function productDifferences(manifestProduct: Record<string, unknown>, imageProduct: Record<string, unknown>): string[] {
  const keys = [...new Set([...Object.keys(manifestProduct), ...Object.keys(imageProduct)])]
  return keys
    .filter((key) => !isDeepStrictEqual(manifestProduct[key], imageProduct[key]))
    .map((key) => `${key} (manifest ${show(manifestProduct[key])}, image ${show(imageProduct[key])})`)
}

/** Records the product_info check; returns the PRODUCT_INFO JSON when it could be read. */
function checkProductInfo(checks: ReleaseChecks, manifest: unknown, image: McubootImage): Record<string, unknown> | undefined {
  const tlv = findTlv(image, 'PRODUCT_INFO')
  const read = tlv.ok ? readProductInfo(tlv.value) : { reason: tlv.reason }
  if (!read.product) {
    checks.record('product_info', [read.reason ?? `${describeTlv('PRODUCT_INFO')} TLV is unreadable`])
    return undefined
  }
  const manifestProduct = field(manifest, 'product')
  if (!isPlainObject(manifestProduct)) {
    checks.skip('product_info', 'manifest product is not an object')
    return read.product
  }
  const differences = productDifferences(manifestProduct, read.product)
  checks.record('product_info', differences.length === 0 ? [] : [
    `manifest product differs from the image's ${describeTlv('PRODUCT_INFO')} TLV: ${differences.join(', ')}`,
  ])
  return read.product
}

/**
 * Runs every check of contract §6 on an uploaded image and its manifest (all but the
 * duplicate release id, which needs the database) and reports every failure. Never throws.
 *
 * @example
 * const result = verifyRelease(imageBytes, JSON.parse(manifestText), config.firmwareRootPublicKey)
 * if (!result.ok) throw new AppError('invalid_firmware', result.reasons[0], { reasons: result.reasons })
 */
export function verifyRelease(image: Buffer, manifest: unknown, rootPublicKey: KeyObject, revokedKeys?: ReadonlySet<string>): ReleaseVerification {
  const checks = new ReleaseChecks()
  const sha256 = createHash('sha256').update(image).digest('hex')
  const crc32 = crc32Hex(image)

  checks.record('manifest', checkManifestShape(manifest))
  checkFileDigests(checks, manifest, image.length, sha256, crc32)

  const parsed = parseMcubootImage(image)
  checks.record('layout', parsed.ok ? [] : [parsed.reason])
  let info: ReleaseInfo | undefined
  if (parsed.ok) {
    verifySignatureChain(checks, image, parsed.image, rootPublicKey, revokedKeys)
    checkVersions(checks, manifest, parsed.image.header)
    const product = checkProductInfo(checks, manifest, parsed.image)
    info = { size: image.length, sha256, crc32, header: parsed.image.header }
    if (Value.Check(ProductInfoSchema, product)) info.product = product
  } else {
    for (const name of ['image_hash', 'signing_key', 'signer_cert', 'signature', 'image_version', 'display_version', 'product_info'] as const) {
      checks.skip(name, NEEDS_IMAGE)
    }
  }
  return { ok: checks.ok, reasons: checks.reasons, checks: checks.list, info }
}
